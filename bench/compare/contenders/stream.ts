/**
 * stream: timebucket as deployed. CDC (Debezium) → repartitioner → rings → expirer →
 * event_outbox → outbox connector → event topics, the roles in separate processes
 * (repartitioner; EXPIRERS expirers, default 1; cascader + outbox-keeper), on a topology, topics,
 * consumer groups and captured database of the run's own: the run's database gets its own CDC
 * and outbox connectors (lib/bench-capture.ts), so the run reads exactly its own changes and
 * leaves nothing in the stack's pipeline. Progress: the events read back from the event topics.
 * Afterwards the run's connectors, topics, groups and schema subjects are deleted.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { rmSync } from 'node:fs';
import { declaredTopics } from '../../../src/core/topology';
import { createKafka } from '../../../src/kafka/client';
import { applyTopics } from '../../../src/kafka/topics-apply';
import { createLogger } from '../../../src/ops/logger';
import { registryAuthHeaders } from '../../../src/publish/schema-registry';
import type { Config } from '../../../src/config';
import { Child, freePort, startRoles, waitReady } from '../../lib/children';
import { log } from '../../lib/log';
import { scrapeMetrics } from '../../lib/metrics-text';
import type { Contender } from '../contender';
import { followEvents } from './event-follower';
import { writeStreamTopology } from './stream-topology';
import { loadEntities } from '../../../src/ops/load-entities';
import { planBenchCapture } from '../../lib/bench-capture';
import { registerSchemas } from '../../lib/register-schemas';
import { watchPacing } from './pacing-watch';

/** The processes, as deployed: name → roles; `expirers` expirer processes share the rings' partitions. */
function processes(expirers: number): ReadonlyArray<readonly [string, string]> {
  const expirerNames = expirers === 1 ? ['expirer'] : Array.from({ length: expirers }, (_, i) => `expirer-${i + 1}`);
  return [['repartitioner', 'repartitioner'], ...expirerNames.map((n) => [n, 'expirer'] as const), ['cascader+outbox-keeper', 'cascader,outbox-keeper']];
}

/** The stream with its expirers' pacing off (TB_PACING=off: as fast as the database lets it). */
export const stream: Contender = streamContender('stream', 'off');
/** The stream with pacing on at its defaults (core/pacer.ts): what a deployment runs. */
export const paced: Contender = streamContender('paced', 'on');

function streamContender(name: 'stream' | 'paced', pacing: 'on' | 'off'): Contender {
  return {
    name,
    needsCdc: true,
    async start(ctx) {
      const prefix = `tbbench${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
      const mixed = ctx.workload === 'mixed';
      const { topology, path } = writeStreamTopology(prefix, mixed ? { shards: 16, partitions: ctx.params.mixedPartitions } : {});
      // kafkajs's complaints while the new topics get leaders go to the run's log, not stdout.
      const kafka = createKafka(
        ctx.config.kafka,
        createLogger('warn', { bench: prefix }, pino.destination({ dest: `${ctx.logPrefix}-stream-admin.log`, sync: true })),
        '-bench',
      );
      const admin = kafka.admin();
      await admin.connect();
      const capture = await planBenchCapture({
        config: ctx.config,
        catalogue: loadEntities(ctx.config.entitiesPath),
        db: ctx.db,
        dbName: ctx.dbName,
        topicPrefix: prefix,
      });
      const topics = [...declaredTopics(topology), ...capture.cdcTopics];
      const PROCESSES = processes(ctx.params.expirers);
      const children: Child[] = [];
      const ports: number[] = [];
      let follower: Awaited<ReturnType<typeof followEvents>> | undefined;
      const cleanUp = async () => {
        await Promise.all(children.map((c) => c.stop()));
        await follower?.stop().catch(() => undefined);
        await capture.remove();
        await deleteRunState(
          admin,
          prefix,
          topics.map((t) => t.topic),
          ctx.config.registry,
          topology.events.map((e) => e.topic),
        );
        await admin.disconnect();
        rmSync(path, { force: true });
      };
      try {
        log(`stream: creating ${topics.length} topics under ${prefix}`);
        await applyTopics(admin, topics);
        // The deployment's `schemas register` Job: the expirers read the saved ids.
        await registerSchemas({ ...process.env, ...capture.env, TB_TOPOLOGY: path }, topology);
        await capture.start();
        log(`stream: topics and connectors ready; starting ${PROCESSES.map(([n]) => n).join(', ')}`);
        const env = {
          ...process.env,
          ...capture.env,
          TB_TOPOLOGY: path,
          TB_GROUP_PREFIX: prefix,
          TB_LOG_LEVEL: process.env['TB_LOG_LEVEL'] ?? 'warn',
          // The stack's replica, where it runs, is configured by stack/env.sh (TB_DB_REPLICA_HOST):
          // its lag is then a pacing signal, as in a deployment with a replica.
          TB_PACING: pacing,
        };
        ports.length = 0;
        for (const [name, roles] of PROCESSES) {
          const port = await freePort();
          ports.push(port);
          const instance = `${prefix}-${name.replace('+', '-')}`.slice(0, 48);
          children.push(startRoles(name, roles, { ...env, TB_HTTP_PORT: String(port), TB_INSTANCE_ID: instance }, `${ctx.logPrefix}-${name}.log`));
        }
        // Rows written before every consumer owns its partitions would measure group start-up.
        await Promise.all(children.map((c, i) => waitReady(c, ports[i]!)));
        follower = await followEvents(
          kafka,
          `${prefix}.bench-events`,
          topology.events.map((e) => e.topic),
        );
      } catch (err) {
        await cleanUp().catch(() => undefined);
        throw err;
      }
      const events = follower;
      const pacingWatch = watchPacing(ports.filter((_, i) => PROCESSES[i]![1] === 'expirer'));
      return {
        pacing: () => pacingWatch.stop(),
        children,
        onRows: (rows) => events.sawRows(rows.entity, rows.firstId, rows.dueMs.length),
        progress: () => events.seen().count,
        events: () => events.seen(),
        transitions: async () => {
          let n = 0;
          for (const [i, [, roles]] of PROCESSES.entries()) {
            if (roles !== 'expirer') continue;
            const scrape = await scrapeMetrics(ports[i]!);
            for (const [key, value] of scrape) if (key.startsWith('timebucket_transitions_total')) n += value;
          }
          return n;
        },
        stop: async () => {
          pacingWatch.stop();
          await cleanUp();
        },
      };
    },
  };
}

/** Best effort: a leftover topic or group is untidy, not wrong, so failures are only logged. */
export async function deleteRunState(
  admin: ReturnType<ReturnType<typeof createKafka>['admin']>,
  prefix: string,
  topics: readonly string[],
  registry: Config['registry'],
  eventTopics: readonly string[],
  groupNames: readonly string[] = ['repartitioner', 'expirer', 'cascader', 'bench-events'],
): Promise<void> {
  const groups = groupNames.map((g) => `${prefix}.${g}`);
  await admin.deleteGroups(groups).catch((err: unknown) => log(`stream: could not delete the groups of ${prefix}: ${String(err)}`));
  for (let i = 0; i < topics.length; i += 50) {
    await admin
      .deleteTopics({ topics: topics.slice(i, i + 50), timeout: 60_000 })
      .catch((err: unknown) => log(`stream: could not delete topics of ${prefix}: ${String(err)}`));
  }
  for (const topic of eventTopics) {
    const subject = `${registry.url}/subjects/${encodeURIComponent(`${topic}-value`)}`;
    const headers = registryAuthHeaders(registry.auth);
    // The Confluent API deletes softly first, then for good.
    await fetch(subject, { method: 'DELETE', headers })
      .then(() => fetch(`${subject}?permanent=true`, { method: 'DELETE', headers }))
      .catch((err: unknown) => log(`stream: could not delete the subject of ${topic}: ${String(err)}`));
  }
}
