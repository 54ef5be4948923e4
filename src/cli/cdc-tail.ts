/** Prints CDC events of every mapped table as they arrive: a look at what Debezium sends. */
import { DateTime } from 'luxon';
import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { createKafka } from '../kafka/client';
import { decodeCdcValue } from '../core/cdc-envelope';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { cdcTopics } from '../ingest/cdc-topics';
import { KafkaUnavailableError } from '../core/errors';
import { retry, withinDeadline } from '../runtime/retry';
import { RetryPolicies } from '../runtime/retry-policy';
import type { Admin } from 'kafkajs';
import { systemClock, type Clock } from '../core/clock';

const WAIT_MS = 60_000;

/**
 * Debezium creates a table's topic with its first event: the CDC topics that exist, once one
 * does, within WAIT_MS. The wait is logged once at info; the runner's warning per attempt is not
 * (its logger is silent), as the loop before it logged none. A failure to list the topics ends
 * the command at once, as before: only a missing topic is waited for.
 */
export async function waitForCdcTopic(
  admin: Pick<Admin, 'listTopics'>,
  topics: readonly string[],
  logger: Logger,
  clock: Clock = systemClock,
  /** Default: the runner's own sleep. */
  sleep?: (ms: number) => Promise<void>,
): Promise<string[]> {
  let said = false;
  return retry(
    async () => {
      const existing = (await admin.listTopics()).filter((t) => topics.includes(t));
      if (existing.length > 0) return existing;
      if (!said) logger.info({ topics }, `no CDC topic yet: waiting up to ${WAIT_MS / 1000} s for Debezium to create one (with a mapped table's first change)`);
      said = true;
      throw new KafkaUnavailableError(`no CDC topic (${topics.join(', ')}) appeared within ${WAIT_MS / 1000} s: is the connector running?`, {
        topics: topics.length,
      });
    },
    {
      policy: RetryPolicies.topicsAppear,
      what: 'waiting for a CDC topic',
      log: () => undefined,
      // Only the missing topic (thrown above) is waited for.
      beforeWait: (err) => {
        if (!(err instanceof KafkaUnavailableError)) throw err;
      },
      ...withinDeadline(WAIT_MS, clock, sleep),
    },
  );
}

export async function cdcTail(config: Config, catalogue: EntityCatalogue, logger: Logger, opts: { seconds?: number }): Promise<void> {
  const kafka = createKafka(config.kafka, logger, '-cdc-tail');
  const byTopic = cdcTopics(config, catalogue);
  const topics = Object.keys(byTopic);

  const admin = kafka.admin();
  await admin.connect();
  const existing = await waitForCdcTopic(admin, topics, logger).finally(() => admin.disconnect());

  const consumer = kafka.consumer({ groupId: `timebucket-cdc-tail-${process.pid}` });
  await consumer.connect();
  await consumer.subscribe({ topics: existing, fromBeginning: false });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const event = decodeCdcValue(message.value);
      if (event.kind === 'tombstone') {
        console.log(`${topic}[${partition}]@${message.offset} tombstone key=${message.key?.toString()}`);
        return;
      }
      const row = event.after ?? event.before;
      const entity = byTopic[topic]!.entity;
      const dues = entity.transitions.map((t) => {
        const v = row?.[t.due.column];
        const ms = typeof v === 'number' ? (t.due.kind === 'epoch_s' ? v * 1000 : v) : undefined;
        return `${t.due.column}=${ms === undefined ? String(v) : DateTime.fromMillis(ms, { zone: 'utc' }).toISO()}`;
      });
      console.log(
        `${topic}[${partition}]@${message.offset} op=${event.op} ${entity.name} id=${String(row?.[entity.idColumn])} status=${String(row?.[entity.status.column])} ${[...new Set(dues)].join(' ')}`,
      );
    },
  });

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (opts.seconds !== undefined) setTimeout(stop, opts.seconds * 1000).unref();
  });
  await consumer.disconnect();
}
