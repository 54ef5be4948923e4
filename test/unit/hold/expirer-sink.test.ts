import type { Location, Transition } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { ExpirerSink, type ExpirerSinkOptions } from '../../../src/hold/expirer-sink';
import type { HeldMessage } from '../../../src/hold/hold-consumer';
import { createLogger } from '../../../src/ops/logger';
import { deferred, heldMessage, type Deferred } from '../../support/fake-held-message';
import defaultEntities from '../../../entities/default.json';

const catalogue = parseEntityFile(defaultEntities, 'entities/default.json');

const T0 = 1_700_000_000_000;
/** `database`: the location's, where the batch's transaction runs. */
type Call = { entity: string; ref: string; ids: string[]; at: number; database: string; result: Deferred<BatchOutcome> };

/** A fake expireBatch: records calls; each returns a promise the test settles (or auto-settles). */
function harness(opts: Partial<ExpirerSinkOptions> & { auto?: (c: Call) => BatchOutcome | Error | undefined } = {}) {
  const calls: Call[] = [];
  const parked: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sink = new ExpirerSink({
    catalogue,
    clock: { now: () => Date.now() },
    maxBatchSize: 10,
    maxConcurrentBatches: 4,
    backoff: { baseMs: 100, maxMs: 10_000 },
    maxAttempts: 3,
    cutOverGraceMs: 10_000,
    random: () => 1,
    park: async (m) => void parked.push(m.entry.id),
    logger: createLogger('silent'),
    ...opts,
    expireBatch: (transition: Transition, entries: readonly ScheduledEntry[], location: Location) => {
      const call: Call = {
        entity: transition.entity,
        ref: transition.ref,
        ids: entries.map((e) => e.id),
        at: Date.now(),
        database: location.database,
        result: deferred<BatchOutcome>(),
      };
      calls.push(call);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const auto = (opts.auto ?? transitionAll)(call);
      if (auto instanceof Error) call.result.reject(auto);
      else if (auto !== undefined) call.result.resolve(auto);
      return call.result.promise.finally(() => (inFlight -= 1));
    },
  });
  const done: string[] = [];
  const take = (m: HeldMessage): void => sink.take(m, () => done.push(m.entry.id));
  return { sink, calls, done, take, parked, maxInFlight: () => maxInFlight };
}

function outcome(ids: readonly string[], o: Partial<BatchOutcome> = {}): BatchOutcome {
  return { transitioned: ids.map((id) => ({ id, dueAtMs: T0 })), notYetDue: [], stale: [], dbNowMs: Date.now(), ...o };
}
const transitionAll = (c: Call): BatchOutcome => outcome(c.ids);
/** A retriable failure: the database refused the connection. */
const dbDown = (): Error => Object.assign(new Error('db down'), { code: 'ECONNREFUSED' });
/** A retriable failure: a row lock held past the lock wait timeout. */
const lockWait = (): Error => Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205 });
const settle = (): Promise<void> => jest.advanceTimersByTimeAsync(0);

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

describe('ExpirerSink', () => {
  test('an entry fires at its own expireAtMs, not before, then is done', async () => {
    const h = harness();
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 500 }));
    expect(h.sink.waiting).toBe(1);
    await jest.advanceTimersByTimeAsync(499);
    expect(h.calls).toHaveLength(0);
    expect(h.done).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.calls.map((c) => [c.entity, c.ids, c.at])).toEqual([['coupon', ['1'], T0 + 500]]);
    expect(h.done).toEqual(['1']);
    expect(h.sink.waiting).toBe(0);
  });

  test('entries taken out of order fire in time order, each at its own time', async () => {
    const h = harness();
    h.take(heldMessage({ id: '3', expireAtMs: T0 + 300 }));
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 100 }));
    h.take(heldMessage({ id: '2', expireAtMs: T0 + 200 }));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.calls.map((c) => [c.ids, c.at])).toEqual([
      [['1'], T0 + 100],
      [['2'], T0 + 200],
      [['3'], T0 + 300],
    ]);
  });

  test('an already overdue entry fires at once', async () => {
    const h = harness();
    h.take(heldMessage({ id: '7', expireAtMs: T0 - 60_000 }));
    await settle();
    expect(h.calls.map((c) => c.ids)).toEqual([['7']]);
  });

  test('batches group by entity, shards mixed (one database), and respect maxBatchSize', async () => {
    const h = harness({ maxBatchSize: 2, maxConcurrentBatches: 10 });
    const at = T0 + 50;
    for (const [id, entity, shard] of [
      ['1', 'coupon', 0],
      ['2', 'coupon', 1],
      ['3', 'order', 0],
      ['4', 'coupon', 0],
      ['5', 'coupon', 0],
      ['6', 'order', 0],
    ] as const) {
      h.take(heldMessage({ id, entity, shard, expireAtMs: at }));
    }
    await jest.advanceTimersByTimeAsync(50);
    expect(h.calls.map((c) => [c.entity, c.ids])).toEqual([
      ['coupon', ['1', '2']],
      ['coupon', ['4', '5']],
      ['order', ['3', '6']],
    ]);
    expect([...h.done].sort()).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  test('maxConcurrentBatches is never exceeded within one shard; queued work runs as slots free up', async () => {
    const h = harness({ maxBatchSize: 1, maxConcurrentBatches: 2, auto: () => undefined });
    for (let i = 1; i <= 5; i += 1) h.take(heldMessage({ id: String(i), expireAtMs: T0 + 10 }));
    await jest.advanceTimersByTimeAsync(10);
    expect(h.calls.map((c) => c.ids)).toEqual([['1'], ['2']]);
    h.calls[0]!.result.resolve(outcome(['1']));
    await settle();
    expect(h.calls).toHaveLength(3);
    expect(h.done).toEqual(['1']);
    for (let i = 1; i < 5; i += 1) {
      h.calls[i]!.result.resolve(outcome(h.calls[i]!.ids));
      await settle();
    }
    expect(h.calls.map((c) => c.ids[0])).toEqual(['1', '2', '3', '4', '5']);
    expect(h.done).toEqual(['1', '2', '3', '4', '5']);
    expect(h.maxInFlight()).toBe(2);
  });

  // Both entities due at once must not start more batches than free slots.
  test('maxConcurrentBatches holds across entities', async () => {
    const h = harness({ maxBatchSize: 2, maxConcurrentBatches: 1, auto: () => undefined });
    h.take(heldMessage({ id: '1', entity: 'coupon', expireAtMs: T0 + 10 }));
    h.take(heldMessage({ id: '2', entity: 'order', expireAtMs: T0 + 10 }));
    await jest.advanceTimersByTimeAsync(10);
    expect(h.maxInFlight()).toBe(1);
  });

  // A backlog of two entities, more than the free slots take: the earliest entries go first,
  // whichever entity they belong to, not one entity's whole run before the other's.
  test('with more due than the slots take, the earliest go first across entities', async () => {
    const h = harness({ maxBatchSize: 3, maxConcurrentBatches: 1, auto: () => undefined });
    // The one slot is busy while the backlog falls due.
    h.take(heldMessage({ id: 'busy', entity: 'coupon', expireAtMs: T0 }));
    await settle();
    for (const [id, entity, ms] of [
      ['c1', 'coupon', 1],
      ['c3', 'coupon', 3],
      ['c5', 'coupon', 5],
      ['o2', 'order', 2],
      ['o4', 'order', 4],
    ] as const) {
      h.take(heldMessage({ id, entity, expireAtMs: T0 + ms }));
    }
    await jest.advanceTimersByTimeAsync(10);
    h.calls[0]!.result.resolve(outcome(['busy']));
    await settle();
    // One slot, room for three entries: c1, o2, c3, in two batches (one per entity) of which one starts.
    expect(h.calls.map((c) => [c.entity, c.ids])[1]).toEqual(['coupon', ['c1', 'c3']]);
    h.calls[1]!.result.resolve(outcome(['c1', 'c3']));
    await settle();
    // (o2, left over, went back in the queue at the time it was left: the batch's order is not asserted.)
    expect(h.calls.map((c) => [c.entity, [...c.ids].sort()])[2]).toEqual(['order', ['o2', 'o4']]);
    h.calls[2]!.result.resolve(outcome(['o2', 'o4']));
    await settle();
    expect(h.calls.map((c) => [c.entity, c.ids]).slice(3)).toEqual([['coupon', ['c5']]]);
  });

  test('notYetDue → re-queued for retryInMs; done only after a later transition', async () => {
    let attempt = 0;
    const h = harness({
      auto: (c) => (attempt++ === 0 ? outcome([], { notYetDue: [{ entry: { id: '1', expireAtMs: T0 + 100 }, retryInMs: 300 }] }) : outcome(c.ids)),
    });
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 100 }));
    await jest.advanceTimersByTimeAsync(100);
    expect(h.calls).toHaveLength(1);
    expect(h.done).toEqual([]);
    expect(h.sink.waiting).toBe(1);
    await jest.advanceTimersByTimeAsync(299);
    expect(h.calls).toHaveLength(1);
    expect(h.done).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.calls.map((c) => c.at)).toEqual([T0 + 100, T0 + 400]);
    expect(h.done).toEqual(['1']);
  });

  test('in a mixed outcome only the notYetDue entry waits; stale and transitioned are done', async () => {
    const h = harness({
      auto: (c) =>
        c.ids.length === 3
          ? outcome(['1'], { stale: [{ id: '2', expireAtMs: T0 }], notYetDue: [{ entry: { id: '3', expireAtMs: T0 }, retryInMs: 50 }] })
          : undefined,
    });
    for (const id of ['1', '2', '3']) h.take(heldMessage({ id, expireAtMs: T0 }));
    await settle();
    expect(h.done).toEqual(['1', '2']);
    expect(h.sink.waiting).toBe(1);
    await jest.advanceTimersByTimeAsync(50);
    expect(h.calls.map((c) => c.ids)).toEqual([['1', '2', '3'], ['3']]);
  });

  test('retriable failures retry with exponential backoff, as long as they last; done only after success', async () => {
    let attempt = 0;
    const failed: unknown[] = [];
    const h = harness({ auto: (c) => (attempt++ < 2 ? dbDown() : outcome(c.ids)), observer: { failed: (_e, err) => failed.push(err) } });
    h.take(heldMessage({ id: '1', expireAtMs: T0 }));
    await settle();
    expect(h.calls).toHaveLength(1);
    expect(failed).toEqual([dbDown()]);
    await jest.advanceTimersByTimeAsync(99); // first retry after 100 ms (jitter at its ceiling)
    expect(h.calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.calls).toHaveLength(2);
    expect(h.done).toEqual([]);
    await jest.advanceTimersByTimeAsync(199); // second after 200 ms
    expect(h.calls).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.calls.map((c) => c.at - T0)).toEqual([0, 100, 300]);
    expect(h.done).toEqual(['1']);
  });

  test('backoff is capped by backoff.maxMs', async () => {
    let attempt = 0;
    const h = harness({ backoff: { baseMs: 100, maxMs: 150 }, auto: (c) => (attempt++ < 3 ? dbDown() : outcome(c.ids)) });
    h.take(heldMessage({ id: '1', expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.calls.map((c) => c.at - T0)).toEqual([0, 100, 250, 400]);
    expect(h.done).toEqual(['1']);
  });

  test('a retriable failure is never parked, however long it lasts', async () => {
    const h = harness({ auto: () => dbDown() });
    h.take(heldMessage({ id: '1', expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(120_000);
    expect(h.calls.length).toBeGreaterThan(10);
    expect(h.parked).toEqual([]);
    expect(h.done).toEqual([]);
  });

  test('a deterministic failure: each entry is tried alone, the bad one parked after maxAttempts, the rest done', async () => {
    const parkedErrors: unknown[] = [];
    const constraint = Object.assign(new Error('CONSTRAINT `chk` failed'), { errno: 4025 });
    const h = harness({ auto: (c) => (c.ids.includes('2') ? constraint : outcome(c.ids)), observer: { parked: (_e, err) => parkedErrors.push(err) } });
    for (const id of ['1', '2', '3']) h.take(heldMessage({ id, expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.calls.map((c) => c.ids)).toEqual([['1', '2', '3'], ['1'], ['2'], ['3'], ['2'], ['2']]);
    expect(h.parked).toEqual(['2']);
    expect(parkedErrors).toEqual([constraint]);
    expect(h.done.sort()).toEqual(['1', '2', '3']);
    expect(h.sink.waiting).toBe(0);
  });

  test('waits do not spend the budget for failing alone: after retriable failures, a deterministic one still gets maxAttempts tries alone', async () => {
    const constraint = Object.assign(new Error('CONSTRAINT `chk` failed'), { errno: 4025 });
    let call = 0;
    // Three lock waits, then the row fails deterministically twice alone, then it goes through.
    const h = harness({ auto: (c) => (call++ < 3 ? lockWait() : call <= 6 ? constraint : outcome(c.ids)) });
    h.take(heldMessage({ id: '1', expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(10_000);
    expect(h.calls).toHaveLength(7);
    expect(h.parked).toEqual([]);
    expect(h.done).toEqual(['1']);
  });

  test('a missing table (a cut-over) is retried as a whole batch within the grace, and nothing is parked', async () => {
    const noTable = Object.assign(new Error("Table 'shop.coupons' doesn't exist"), { errno: 1146 });
    const h = harness({ auto: (c) => (c.at - T0 < 3_000 ? noTable : outcome(c.ids)) });
    for (const id of ['1', '2', '3']) h.take(heldMessage({ id, expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(10_000);
    expect(h.calls.every((c) => c.ids.length === 3)).toBe(true);
    expect(h.calls.length).toBeGreaterThan(3);
    expect(h.parked).toEqual([]);
    expect(h.done.sort()).toEqual(['1', '2', '3']);
  });

  test('an unknown column past the grace is believed: entries are tried alone and parked', async () => {
    const noColumn = Object.assign(new Error("Unknown column 'expire_at' in 'where clause'"), { errno: 1054 });
    const h = harness({ auto: () => noColumn });
    for (const id of ['1', '2']) h.take(heldMessage({ id, expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(9_000);
    expect(h.calls.every((c) => c.ids.length === 2)).toBe(true);
    expect(h.parked).toEqual([]);
    await jest.advanceTimersByTimeAsync(30_000);
    expect(h.parked.sort()).toEqual(['1', '2']);
    expect(h.done.sort()).toEqual(['1', '2']);
  });

  test('an entry whose parking fails stays and is tried again', async () => {
    let parkFailures = 1;
    const parked: string[] = [];
    const h = harness({
      auto: () => new TypeError('bug'),
      maxAttempts: 1,
      park: async (m) => {
        if (parkFailures-- > 0) throw dbDown();
        parked.push(m.entry.id);
      },
    });
    h.take(heldMessage({ id: '1', expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(parked).toEqual(['1']);
    expect(h.done).toEqual(['1']);
  });

  test('reset() drops waiting entries: they never fire and their done is never called', async () => {
    const h = harness();
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 100 }));
    h.take(heldMessage({ id: '2', expireAtMs: T0 + 200 }));
    h.sink.reset();
    expect(h.sink.waiting).toBe(0);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.calls).toHaveLength(0);
    expect(h.done).toEqual([]);
    h.take(heldMessage({ id: '3', expireAtMs: T0 + 1_100 }));
    await jest.advanceTimersByTimeAsync(100);
    expect(h.calls.map((c) => c.ids)).toEqual([['3']]);
  });

  test('reset() during a failing batch: the batch is not retried', async () => {
    const h = harness({ auto: () => undefined });
    h.take(heldMessage({ id: '1', expireAtMs: T0 }));
    await settle();
    h.sink.reset();
    h.calls[0]!.result.reject(dbDown());
    await jest.advanceTimersByTimeAsync(20_000);
    expect(h.calls).toHaveLength(1);
    expect(h.done).toEqual([]);
    expect(h.sink.waiting).toBe(0);
  });

  test('stale entries are done without a retry', async () => {
    const h = harness({ auto: (c) => outcome([], { stale: c.ids.map((id) => ({ id, expireAtMs: T0 })) }) });
    h.take(heldMessage({ id: '1', expireAtMs: T0 }));
    h.take(heldMessage({ id: '2', expireAtMs: T0 }));
    await jest.advanceTimersByTimeAsync(10_000);
    expect(h.calls).toHaveLength(1);
    expect(h.done).toEqual(['1', '2']);
  });

  test('close() stops firing', async () => {
    const h = harness();
    h.take(heldMessage({ id: '1', expireAtMs: T0 + 100 }));
    h.sink.close();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.calls).toHaveLength(0);
    expect(jest.getTimerCount()).toBe(0);
  });
});

/**
 * Each database has its own slots: batches hung on one database (a server that stopped
 * answering, before their statements' deadline) never take the slots another database's
 * entries need.
 */
describe('ExpirerSink over two databases', () => {
  // Coupons on the main database, orders on `wallet` (their coupon effect and its event field dropped: an effect needs one database).
  const file = JSON.parse(JSON.stringify(defaultEntities)) as { entities: Array<Record<string, unknown>> };
  const order = file.entities[1]!;
  delete order['table'];
  order['locations'] = [{ database: 'wallet', table: 'orders' }];
  for (const t of order['transitions'] as Array<Record<string, unknown>>) {
    delete t['effects'];
    const event = t['event'] as { fields: Array<Record<string, unknown>> };
    event.fields = event.fields.filter((f) => !('effect' in f));
  }
  const twoDatabases = parseEntityFile(file, 'two-databases.json');

  test("batches hung on one database leave the other database's slots free: its entries fire at their time", async () => {
    // Nothing settles by itself: the test answers each batch, or leaves it hanging.
    const h = harness({ catalogue: twoDatabases, maxBatchSize: 2, maxConcurrentBatches: 2, auto: () => undefined });
    const onDb = (database: string) => h.calls.filter((c) => c.database === database);
    // Orders due first fill wallet's two slots, and never answer.
    for (let i = 0; i < 6; i += 1) h.take(heldMessage({ entity: 'order', id: `o${i}`, expireAtMs: T0 + 100 }));
    await jest.advanceTimersByTimeAsync(100);
    expect(h.calls.map((c) => c.database)).toEqual(['wallet', 'wallet']);

    h.take(heldMessage({ entity: 'coupon', id: 'c1', expireAtMs: T0 + 200 }));
    h.take(heldMessage({ entity: 'coupon', id: 'c2', expireAtMs: T0 + 300 }));
    await jest.advanceTimersByTimeAsync(100);
    expect(onDb('main').map((c) => c.ids)).toEqual([['c1']]);
    onDb('main')[0]!.result.resolve(outcome(['c1']));
    await jest.advanceTimersByTimeAsync(100);
    expect(onDb('main').map((c) => c.ids)).toEqual([['c1'], ['c2']]);
    onDb('main')[1]!.result.resolve(outcome(['c2']));
    await jest.advanceTimersByTimeAsync(0);
    expect(h.done).toEqual(['c1', 'c2']);
    // Wallet's other orders wait for its slots, counted as due.
    expect(onDb('wallet')).toHaveLength(2);
    expect(h.sink.dueCount(Date.now())).toBe(6);

    // Wallet answers: its waiting orders take the slots freed.
    for (const c of onDb('wallet')) c.result.resolve(outcome(c.ids));
    await jest.advanceTimersByTimeAsync(0);
    expect(
      onDb('wallet')
        .flatMap((c) => c.ids)
        .sort(),
    ).toEqual(['o0', 'o1', 'o2', 'o3', 'o4', 'o5']);
  });
});
