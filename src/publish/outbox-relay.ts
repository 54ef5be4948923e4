/**
 * A relay loop: outbox rows → event topics, at least once, in outbox order per entity.
 *
 * One cycle is one database transaction:
 *   lock up to batchSize unpublished rows (FOR UPDATE SKIP LOCKED) → check and Avro-encode each →
 *   move poison rows to outbox_poison → per topic, in requests under maxSendBytes:
 *   send (acks = all) → mark those published → commit
 *
 * The row locks are the loop's lease (lock-outbox-batch.ts): other loops skip the batch while it
 * is in flight, the commit releases whatever was not published, a loop that dies loses its locks
 * with its connection, and one that stalls is cut off by the database after leaseMs
 * (idle_transaction_timeout). A row is marked published only after Kafka acknowledged it, so a
 * crash or an error anywhere leaves it unpublished and it is sent again: delivery is at least
 * once and subscribers deduplicate on the `event_key` header (invariant I4). A row that can
 * never be encoded is poison: it is moved out of the outbox and counted, so it cannot block the
 * rows behind it.
 *
 * Per-entity order: a loop sends a row only when every earlier row of its entity is published
 * (entity-order.ts), so on the entity's partition the first copy of each event follows outbox
 * order, across any number of loops and relays. Several loops are several OutboxRelay objects,
 * each with its own id (start-relay.ts).
 *
 * The loop is a PollLoop (ops/poll-loop.ts): a failed cycle is counted, logged and retried
 * after a jittered, capped back-off while the failure is retriable (the database, the broker or
 * the registry away; a send that outlived the lease); the same deterministic failure three times
 * in a row (a missing table, a revoked grant) turns it FAILED, which /healthz and the exit code
 * report. When there is nothing to do it waits idleDelayMs on a timer that stop() cancels.
 */
import type { Knex } from 'knex';
import type { Message, Producer } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
// Not re-exported by the package index; the class is how csr says "this payload fails the schema".
import { ConfluentSchemaRegistryValidationError } from '@kafkajs/confluent-schema-registry/dist/errors';
import { ConfigError, KafkaUnavailableError, TimebucketError } from '../core/errors';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { EventTopics } from '../core/event-catalogue';
import { Clock, systemClock } from '../core/clock';
import type { Logger } from '../ops/logger';
import { PollLoop } from '../ops/poll-loop';
import type { SchemaIds } from './schemas';
import { dataSchemaUri, eventHeaders } from './event-headers';
import { parseOutboxPayload } from './outbox-payload';
import { DEFAULT_MAX_SEND_BYTES, sendChunks } from './send-chunks';
import { IdleHoldVariable, limitIdleHold, lockOutboxBatch } from './sql/lock-outbox-batch';
import type { OutboxRow } from './sql/outbox-row';
import { markPublished } from './sql/mark-published';
import { PoisonRow, setAsidePoison } from './sql/set-aside-poison';
import type { Component, Health, Lifecycle } from '../core/lifecycle';

export type OutboxRelayOptions = Readonly<{
  db: Knex;
  /** The event types there are: a row of another type is poison. */
  catalogue: EntityCatalogue;
  /** Created by the caller with `idempotent: true` and connected; the relay never disconnects it. */
  producer: Pick<Producer, 'send'>;
  /** From createSchemaRegistry: exact Avro longs (a plain client refuses ids beyond 2^53). */
  registry: Pick<SchemaRegistry, 'encode'>;
  /** From registerEventSchemas, run once at start-up by the caller. */
  schemaIds: SchemaIds;
  /** The registry's base URL: each event's ce_dataschema is its schema there (by id). */
  registryUrl: string;
  /** eventTopics(catalogue, topology): a topic for every catalogue event. */
  topicsByEventType: EventTopics;
  /** Unique per relay loop (≤ 64 chars): recorded as claimed_by on the rows it publishes. */
  relayId: string;
  batchSize: number;
  /** How long a cycle may wait on a send while holding its batch; the database then ends the transaction and frees the rows. */
  leaseMs: number;
  /** How the server cuts off a stalled loop (sql/lock-outbox-batch.ts): by its flavour. */
  idleHoldVariable?: IdleHoldVariable;
  idleDelayMs: number;
  logger: Logger;
  clock?: Clock;
  /** Told of every row published and set aside, and of every failed cycle (metrics). */
  observer?: Partial<{ published: (rows: number) => void; poison: (rows: number) => void; failed: () => void }>;
  /** Back-off after a failed cycle: jittered, its ceiling doubling from idleDelayMs up to this. Default 5 s. */
  maxBackoffMs?: number;
  /** stop() waits at most this long for the in-flight cycle. Default 10 s. */
  stopTimeoutMs?: number;
  /** Bytes per produce request (send-chunks.ts). Default DEFAULT_MAX_SEND_BYTES. */
  maxSendBytes?: number;
}>;

/** read: rows locked to send; deferred: rows left for later behind an earlier row of their entity. */
export type CycleResult = Readonly<{ read: number; published: number; poison: number; deferred: number }>;

type Encoded = { row: OutboxRow; topic: string; message: Message };

export class OutboxRelay implements Component {
  private readonly loop: PollLoop;
  private cycleChain: Promise<unknown> = Promise.resolve();
  private readonly clock: Clock;
  private readonly maxBackoffMs: number;
  private readonly stopTimeoutMs: number;
  private readonly maxSendBytes: number;
  private readonly log: Logger;
  private readonly dataSchemas: ReadonlyMap<string, string>;
  private counts = { cycles: 0, published: 0, poison: 0, errors: 0 };

  constructor(private readonly opts: OutboxRelayOptions) {
    this.clock = opts.clock ?? systemClock;
    this.maxBackoffMs = opts.maxBackoffMs ?? 5_000;
    this.stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
    this.maxSendBytes = opts.maxSendBytes ?? DEFAULT_MAX_SEND_BYTES;
    this.log = opts.logger.child({ component: 'outbox-relay', relayId: opts.relayId });
    const types = opts.catalogue.events.map((e) => e.type);
    const problems = [
      opts.relayId.length >= 1 && opts.relayId.length <= 64 ? null : 'relayId: 1 to 64 characters (the claimed_by column)',
      Number.isInteger(opts.batchSize) && opts.batchSize >= 1 && opts.batchSize <= 10_000 ? null : 'batchSize: an integer in 1..10000',
      Number.isInteger(opts.leaseMs) && opts.leaseMs >= 1_000 ? null : 'leaseMs: an integer >= 1000 (the database counts it in whole seconds)',
      Number.isInteger(opts.idleDelayMs) && opts.idleDelayMs >= 1 ? null : 'idleDelayMs: an integer >= 1',
      this.maxBackoffMs >= opts.idleDelayMs ? null : 'maxBackoffMs: >= idleDelayMs',
      this.stopTimeoutMs > 0 ? null : 'stopTimeoutMs: > 0',
      Number.isInteger(this.maxSendBytes) && this.maxSendBytes >= 1_024 ? null : 'maxSendBytes: an integer >= 1024',
      ...types.map((t) => (opts.topicsByEventType[t] ? null : `topicsByEventType: no topic for ${t}`)),
      ...types.map((t) => (Number.isInteger(opts.schemaIds[t]) ? null : `schemaIds: no schema id for ${t}`)),
    ].filter((p): p is string => p !== null);
    if (problems.length > 0) throw new ConfigError(`invalid outbox relay options: ${problems.join('; ')}`, { problems });
    this.dataSchemas = new Map(types.map((t) => [t, dataSchemaUri(opts.registryUrl, opts.schemaIds[t]!)]));
    this.loop = new PollLoop({
      name: 'outbox relay',
      // Straight on while there are rows; idleDelayMs once a cycle finds none.
      tick: async () => ((await this.runCycle()).read === 0 ? opts.idleDelayMs : 0),
      intervalMs: opts.idleDelayMs,
      backoff: { baseMs: opts.idleDelayMs, maxMs: this.maxBackoffMs },
      stopDeadlineMs: this.stopTimeoutMs,
      logger: this.log,
    });
  }

  get lifecycle(): Lifecycle {
    return this.loop.lifecycle;
  }

  /** Failing once the loop is FAILED; retried failures leave the rows in the outbox and it healthy. */
  health(): Health {
    return this.loop.health();
  }

  failed(): Promise<Error> {
    return this.loop.failed();
  }
  /** Cycles completed without error. */
  get cycles(): number {
    return this.counts.cycles;
  }
  /** Rows sent and marked published by this relay. */
  get published(): number {
    return this.counts.published;
  }
  /** Rows this relay set aside as poison. */
  get poison(): number {
    return this.counts.poison;
  }
  /** Cycles that failed (DB, registry or Kafka error); their rows are retried. */
  get errors(): number {
    return this.counts.errors;
  }

  /** A second start does nothing. */
  start(): Promise<void> {
    return this.loop.start();
  }

  /**
   * Idempotent. Cancels the idle wait, then waits (at most stopTimeoutMs) for the cycle in
   * flight; a cycle abandoned then frees its rows when its transaction ends.
   */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One cycle, for tests and tooling: returns the rows published. Errors are counted and thrown. */
  async publishOnce(): Promise<number> {
    return (await this.runCycle()).published;
  }

  /** Cycles never overlap (the loop and publishOnce share one relay id): they are chained. */
  private runCycle(): Promise<CycleResult> {
    const run = this.cycleChain.then(() => this.cycle());
    this.cycleChain = run.catch(() => undefined);
    return run.then(
      (result) => {
        this.counts.cycles += 1;
        return result;
      },
      (err: unknown) => {
        this.counts.errors += 1;
        this.opts.observer?.failed?.();
        throw err;
      },
    );
  }

  /**
   * One transaction: lock a batch, encode, set poison aside, send and mark each request as Kafka
   * acknowledges it; the commit releases whatever was not published. A failed send ends the
   * cycle with the requests acknowledged before it still committed as published.
   */
  private async cycle(): Promise<CycleResult> {
    const { db, relayId, batchSize, leaseMs } = this.opts;
    const startedAt = this.clock.now();
    let sendFailure: unknown;
    const result = await db
      .transaction(async (trx) => {
        await limitIdleHold(trx, leaseMs, this.opts.idleHoldVariable);
        const { rows, deferred } = await lockOutboxBatch(trx, batchSize);
        const encoded: Encoded[] = [];
        const poison: PoisonRow[] = [];
        for (const row of rows) {
          const outcome = await this.encode(row);
          if ('reason' in outcome) poison.push({ id: row.id, reason: outcome.reason });
          else encoded.push(outcome);
        }
        const setAside = await setAsidePoison(trx, poison, relayId);
        let published = 0;
        for (const { topic, items } of sendChunks(encoded, this.maxSendBytes)) {
          try {
            await this.sendWithinLease(topic, items.map((e) => e.message));
          } catch (err) {
            sendFailure = err;
            break;
          }
          // Marked right after each ack, and kept by the commit: a later send's failure does not resend this one.
          const marked = await markPublished(trx, items.map((e) => e.row.id), relayId);
          if (marked < items.length) {
            this.log.warn({ topic, sent: items.length, marked }, 'rows published meanwhile by another relay: sent twice');
          }
          published += marked;
        }
        await limitIdleHold(trx, 'DEFAULT', this.opts.idleHoldVariable);
        return { read: rows.length, published, poison: setAside, deferred };
      })
      // After a failed send, the send is the cause; a commit or rollback failing after it (on a
      // connection the database closed at the lease) is only its consequence.
      .catch((err: unknown) => {
        throw sendFailure ?? err;
      });
    // Counted once committed: the rows of a rolled-back cycle are published again later.
    this.counts.published += result.published;
    this.counts.poison += result.poison;
    if (result.published > 0) this.opts.observer?.published?.(result.published);
    if (result.poison > 0) this.opts.observer?.poison?.(result.poison);
    if (sendFailure !== undefined) throw sendFailure;
    if (result.read > 0) this.log.debug({ ...result, ms: this.clock.now() - startedAt }, 'outbox cycle');
    return result;
  }

  /**
   * A send that outlives the lease fails: by then the database has ended the transaction and
   * freed the batch, so waiting longer only keeps this loop (and its pooled connection) stuck.
   */
  private async sendWithinLease(topic: string, messages: Message[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const lease = new Promise<never>((_, reject) => {
      // A broker that does not answer: retried, like any broker away.
      timer = setTimeout(() => reject(new KafkaUnavailableError(`send to ${topic} outlived the relay lease (${this.opts.leaseMs} ms)`, { topic })), this.opts.leaseMs);
    });
    try {
      await Promise.race([this.opts.producer.send({ topic, acks: -1, messages }), lease]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The Kafka message for a row, or why the row is poison. Other errors propagate. */
  private async encode(row: OutboxRow): Promise<Encoded | { reason: string }> {
    const parsed = parseOutboxPayload(this.opts.catalogue, row);
    if (!parsed.ok) return this.poisonRow(row, parsed.reason);
    let value: Buffer;
    try {
      value = await this.opts.registry.encode(this.opts.schemaIds[parsed.event.type]!, parsed.payload);
    } catch (err) {
      // Only a payload the schema rejects is poison; a registry outage (schema fetch) is retried.
      if (err instanceof ConfluentSchemaRegistryValidationError) {
        return this.poisonRow(row, `does not match the Avro schema at ${err.paths.map((p) => p.join('.')).join(', ')}`);
      }
      // The registry away or failing: retried (the loop stays healthy) until it answers again.
      throw new TimebucketError('REGISTRY_UNAVAILABLE', `encoding ${parsed.event.type} with schema ${this.opts.schemaIds[parsed.event.type]} failed: ${String(err)}`, { retriable: true, cause: err });
    }
    const headers = eventHeaders({
      eventKey: row.eventKey,
      event: parsed.event,
      entityId: row.entityId,
      occurredAtMs: parsed.occurredAtMs,
      dataSchema: this.dataSchemas.get(parsed.event.type)!,
    });
    return { row, topic: this.opts.topicsByEventType[parsed.event.type]!, message: { key: row.entityId, value, headers: { ...headers } } };
  }

  private poisonRow(row: OutboxRow, reason: string): { reason: string } {
    this.log.error({ eventKey: row.eventKey, eventType: row.eventType, outboxId: row.id, reason }, 'outbox row cannot be encoded; moved to outbox_poison');
    return { reason };
  }
}
