/**
 * The raw contender's process: timebucket's own expiry transactions (expire/transition-batch.ts,
 * for the demo tables' two transitions) driven as fast as the database allows, with nothing in front of them: no
 * Kafka, no CDC, the ids handed over in memory. Batches of TB_EXPIRER_BATCH_SIZE, at most
 * TB_EXPIRER_CONCURRENCY in flight, each row taken once it is due: the ceiling the machine
 * puts on any scheduler that ends in these transactions.
 *
 * Rows arrive in due order per entity (the writer writes them so); the two entities take turns.
 * A row the database finds not yet due (this clock a little ahead of its clock) is queued again
 * for the database's remaining time, as the expirer does (invariant I2).
 */
import { loadConfig } from '../../../src/config';
import { createDb } from '../../../src/db/knex';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { loadEntities } from '../../../src/ops/load-entities';
import { openBenchEventWriter } from '../../lib/event-writer';
import type { Entity } from '../workload';
import type { RowsMessage, WorkerMessage } from './worker-messages';

const config = loadConfig(process.env);
const db = createDb(config.db);
const catalogue = loadEntities(config.entitiesPath);
// The events go where the stream's do: encoded into event_outbox, the same statements; this
// database has no connector, so nothing publishes them.
let batches: ReturnType<typeof createTransitionBatches> | undefined;
const transitions = { coupon: transitionOf(catalogue, 'coupon', 'expired'), order: transitionOf(catalogue, 'order', 'cancelled') } as const;
const { batchSize, concurrency } = config.expirer;
const send = (m: WorkerMessage) => process.send!(m);

/** Due-ordered entries per entity; `head` is the next one to take (a queue without shifting). */
const queues: Record<Entity, { entries: ScheduledEntry[]; head: number }> = { coupon: { entries: [], head: 0 }, order: { entries: [], head: 0 } };
let inFlight = 0;
let transitioned = 0;
let turn = 0;
let timer: NodeJS.Timeout | undefined;

function nextDue(now: number): Entity | undefined {
  const order: Entity[] = turn++ % 2 === 0 ? ['coupon', 'order'] : ['order', 'coupon'];
  return order.find((e) => {
    const q = queues[e];
    return q.head < q.entries.length && q.entries[q.head]!.expireAtMs <= now;
  });
}

function take(entity: Entity, now: number): ScheduledEntry[] {
  const q = queues[entity];
  const batch: ScheduledEntry[] = [];
  while (batch.length < batchSize && q.head < q.entries.length && q.entries[q.head]!.expireAtMs <= now) batch.push(q.entries[q.head++]!);
  if (q.head > 100_000 && q.head * 2 > q.entries.length) {
    q.entries = q.entries.slice(q.head);
    q.head = 0;
  }
  return batch;
}

function pump(): void {
  const now = Date.now();
  for (let entity = nextDue(now); entity !== undefined && inFlight < concurrency; entity = nextDue(now)) {
    const batch = take(entity, now);
    inFlight += 1;
    void run(entity, batch).finally(() => {
      inFlight -= 1;
      pump();
    });
  }
  wakeAtNextDue(now);
}

/** Sleeps until the earliest entry not yet due, if nothing else will call pump() first. */
function wakeAtNextDue(now: number): void {
  if (timer !== undefined || inFlight >= concurrency) return;
  const heads = Object.values(queues)
    .filter((q) => q.head < q.entries.length)
    .map((q) => q.entries[q.head]!.expireAtMs);
  if (heads.length === 0) return;
  timer = setTimeout(
    () => {
      timer = undefined;
      pump();
    },
    Math.max(1, Math.min(...heads) - now),
  );
}

async function run(entity: Entity, batch: ScheduledEntry[]): Promise<void> {
  try {
    const outcome = await batches!.run(transitions[entity], batch, 'stream');
    transitioned += outcome.transitioned.length;
    send({ type: 'progress', transitioned });
    for (const { entry, retryInMs } of outcome.notYetDue) setTimeout(() => requeue(entity, [entry]), retryInMs);
  } catch (err) {
    // A deadlock or lost connection: the rows are untouched, so the batch goes again shortly.
    process.stderr.write(`raw: ${entity} batch of ${batch.length} failed, retried: ${String(err)}\n`);
    setTimeout(() => requeue(entity, batch), 200);
  }
}

function requeue(entity: Entity, entries: ScheduledEntry[]): void {
  const q = queues[entity];
  q.entries.splice(q.head, 0, ...entries);
  pump();
}

process.on('message', (m: RowsMessage) => {
  const { entity, firstId, dueMs } = m.rows;
  const q = queues[entity];
  for (let i = 0; i < dueMs.length; i += 1) q.entries.push({ id: String(firstId + i), expireAtMs: dueMs[i]! });
  pump();
});
process.on('disconnect', () => void db.destroy().finally(() => process.exit(0)));
process.on('SIGTERM', () => void db.destroy().finally(() => process.exit(0)));

async function open(): Promise<void> {
  batches = createTransitionBatches(db, catalogue, { outbox: await openBenchEventWriter(config, db, catalogue) });
}

void open()
  .then(() => send({ type: 'ready' }))
  .catch((err: unknown) => {
    process.stderr.write(`raw: no database: ${String(err)}\n`);
    process.exit(1);
  });
