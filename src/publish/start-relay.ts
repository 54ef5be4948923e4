/** Wires the relay role: event topics from the topology, schemas registered, relay started. */
import type { Knex } from 'knex';
import type { Producer } from 'kafkajs';
import type { Config } from '../config';
import type { Clock } from '../core/clock';
import { EventType, EventTypes } from '../core/events';
import type { Topology } from '../core/topology';
import { ConfigError } from '../core/errors';
import type { Logger } from '../ops/logger';
import { registerEventSchemas } from './schemas';
import { createSchemaRegistry } from './schema-registry';
import { OutboxRelay } from './outbox-relay';
import type { Metrics } from '../ops/metrics';

export async function startRelay(ctx: {
  config: Config;
  topology: Topology;
  db: Knex;
  producer: Pick<Producer, 'send'>;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  metrics: Metrics;
}): Promise<() => Promise<void>> {
  const topicsByEventType = {} as Record<EventType, string>;
  for (const type of EventTypes) {
    const declared = ctx.topology.events.find((e) => e.type === type);
    if (declared === undefined) throw new ConfigError(`topology declares no topic for ${type}`, { problems: ['events'] });
    topicsByEventType[type] = declared.topic;
  }
  const registry = createSchemaRegistry(ctx.config.registry.url);
  const schemaIds = await registerEventSchemas(registry, topicsByEventType, { registryUrl: ctx.config.registry.url });
  const relay = new OutboxRelay({
    db: ctx.db,
    producer: ctx.producer,
    registry,
    schemaIds,
    topicsByEventType,
    relayId: `relay-${ctx.instanceId}`,
    batchSize: ctx.config.relay.batchSize,
    leaseMs: ctx.config.relay.leaseMs,
    idleDelayMs: ctx.config.relay.idleMs,
    logger: ctx.logger.child({ role: 'relay' }),
    clock: ctx.clock,
    observer: { published: (n) => ctx.metrics.outboxPublished.inc(n), poison: (n) => ctx.metrics.outboxPoison.inc(n) },
  });
  relay.start();
  return () => relay.stop();
}
