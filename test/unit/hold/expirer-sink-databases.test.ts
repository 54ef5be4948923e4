/**
 * Each database has its own slots: batches hung on one database (a server that stopped
 * answering, before their statements' deadline) never take the slots another database's
 * entries need.
 */
import type { Location, Transition } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { ExpirerSink } from '../../../src/hold/expirer-sink';
import { createLogger } from '../../../src/ops/logger';
import { deferred, heldMessage, type Deferred } from '../../support/fake-held-message';
import defaultEntities from '../../../entities/default.json';

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
const catalogue = parseEntityFile(file, 'two-databases.json');

const T0 = 1_700_000_000_000;
type Call = { database: string; ids: string[]; result: Deferred<BatchOutcome> };

function harness() {
  const calls: Call[] = [];
  const done: string[] = [];
  const sink = new ExpirerSink({
    catalogue,
    clock: { now: () => Date.now() },
    maxBatchSize: 2,
    maxConcurrentBatches: 2,
    backoff: { baseMs: 100, maxMs: 1_000 },
    maxAttempts: 3,
    random: () => 1,
    park: async () => undefined,
    logger: createLogger('silent'),
    expireBatch: (_transition: Transition, entries: readonly ScheduledEntry[], location: Location) => {
      const call: Call = { database: location.database, ids: entries.map((e) => e.id), result: deferred<BatchOutcome>() };
      calls.push(call);
      return call.result.promise;
    },
  });
  const take = (entity: string, id: string, expireAtMs: number) => sink.take(heldMessage({ entity, id, expireAtMs }), () => done.push(id));
  return { sink, calls, done, take };
}

const outcome = (ids: readonly string[]): BatchOutcome => ({ transitioned: ids.map((id) => ({ id, dueAtMs: T0 })), notYetDue: [], stale: [], dbNowMs: Date.now() });

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

test("batches hung on one database leave the other database's slots free: its entries fire at their time", async () => {
  const h = harness();
  // Orders due first fill wallet's two slots, and never answer.
  for (let i = 0; i < 6; i += 1) h.take('order', `o${i}`, T0 + 100);
  await jest.advanceTimersByTimeAsync(100);
  expect(h.calls.map((c) => c.database)).toEqual(['wallet', 'wallet']);

  h.take('coupon', 'c1', T0 + 200);
  h.take('coupon', 'c2', T0 + 300);
  await jest.advanceTimersByTimeAsync(100);
  const mainCalls = () => h.calls.filter((c) => c.database === 'main');
  expect(mainCalls().map((c) => c.ids)).toEqual([['c1']]);
  mainCalls()[0]!.result.resolve(outcome(['c1']));
  await jest.advanceTimersByTimeAsync(100);
  expect(mainCalls().map((c) => c.ids)).toEqual([['c1'], ['c2']]);
  mainCalls()[1]!.result.resolve(outcome(['c2']));
  await jest.advanceTimersByTimeAsync(0);
  expect(h.done).toEqual(['c1', 'c2']);
  // Wallet's other orders wait for its slots, counted as due.
  expect(h.calls.filter((c) => c.database === 'wallet')).toHaveLength(2);
  expect(h.sink.dueCount(Date.now())).toBe(6);

  // Wallet answers: its waiting orders take the slots freed.
  for (const c of h.calls.filter((x) => x.database === 'wallet')) c.result.resolve(outcome(c.ids));
  await jest.advanceTimersByTimeAsync(0);
  expect(h.calls.filter((c) => c.database === 'wallet').flatMap((c) => c.ids).sort()).toEqual(['o0', 'o1', 'o2', 'o3', 'o4', 'o5']);
});
