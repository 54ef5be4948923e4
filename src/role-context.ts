/**
 * What every role's starter is given and gives back: one signature for all of them
 * (`RoleStarter`), each starter in its stage's folder (ingest/start-repartitioner.ts,
 * hold/start-expirer.ts, hold/start-cascader.ts, publish/start-outbox-keeper.ts,
 * reconcile/start-scanner.ts). main.ts opens the adapters once for the process and wires.
 */
import type { Consumer, Kafka } from 'kafkajs';
import type { Config } from './config';
import type { Clock } from './core/clock';
import type { SchemaInfo } from './core/column-info';
import type { EntityCatalogue } from './core/entity-catalogue';
import type { Topology } from './core/topology';
import type { Db } from './db/knex';
import type { ReminderBatches } from './expire/reminder-batch';
import type { TransitionBatches } from './expire/transition-batch';
import type { DlqWriter } from './kafka/dlq-writer';
import type { GuardedProducer } from './kafka/guarded-producer';
import type { BreakerState } from './runtime/breaker';
import type { Component } from './runtime/lifecycle';
import type { TransitionGate } from './control/gate';
import type { Logger } from './ops/logger';
import type { Metrics } from './ops/metrics';
import { groupIdOf, type Role } from './roles';

export type RoleContext = Readonly<{
  config: Config;
  topology: Topology;
  catalogue: EntityCatalogue;
  /** The mapped tables as information_schema describes them (checked at start). */
  tables: SchemaInfo;
  /** The expiry transaction of every transition, its SQL built once. */
  batches: TransitionBatches;
  /** The reminder transaction of every transition with reminders (docs/reminders.md). */
  reminders: ReminderBatches;
  kafka: Kafka;
  producer: GuardedProducer;
  onBreakerStateChange: (name: string, state: BreakerState) => void;
  dlqFor: (stage: Role) => DlqWriter;
  /** The main database: timebucket's own tables. */
  db: Db;
  /** A pool per database (config.databases), main among them. */
  dbs: Readonly<Record<string, Db>>;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  /** The operator's pause and throttle switches (control/gate.ts). */
  gate: TransitionGate;
}>;

/** Starts a role: the role as one Component (runtime/group.ts composes its parts), started. */
export type RoleStarter = (ctx: RoleContext) => Promise<Component>;

/** The consumer of `role`'s group, with the process's liveness settings. */
export function roleConsumer(ctx: RoleContext, role: Role): Consumer {
  return ctx.kafka.consumer({
    groupId: groupIdOf(ctx.config.groupPrefix, role),
    sessionTimeout: ctx.config.consumer.sessionTimeoutMs,
    heartbeatInterval: ctx.config.consumer.heartbeatIntervalMs,
    maxWaitTimeInMs: 250,
  });
}
