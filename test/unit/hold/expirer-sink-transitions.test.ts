/**
 * The expirer with a catalogue of several transitions per entity and an entity beyond the
 * default file's: batches are of one transition (one SQL shape), queues and the operator's
 * switches stay per entity, and the observer labels by entity.
 */
import type { Transition } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import type { ScheduledEntry } from '../../../src/core/expiry-plan';
import type { BatchOutcome } from '../../../src/expire/batch-outcome';
import { ExpirerSink } from '../../../src/hold/expirer-sink';
import { createTransitionGate } from '../../../src/control/gate';
import { createLogger } from '../../../src/ops/logger';
import { heldMessage } from '../../support/fake-held-message';
import { fakeSwitches } from '../../support/fake-switches';
import defaultEntities from '../../../entities/default.json';

const T0 = 1_700_000_000_000;
const clock = { now: () => Date.now() };

const event = (type: string, idField: string) => ({ type, ceType: `test.${type.toLowerCase()}`, avroName: `test.${type}`, idField, summary: type });
const [coupon, order] = defaultEntities.entities;
/** The default file plus a second coupon transition (a lock timing out) and a third entity. */
const catalogue = parseEntityFile(
  {
    entities: [
      {
        ...coupon,
        transitions: [
          ...coupon!.transitions,
          {
            name: 'lock_timeout',
            from: ['LOCKED'],
            to: 'ACTIVE',
            due: { column: 'lock_expire_time', kind: 'datetime' },
            index: 'idx_coupons_lock',
            set: { locked_order_id: { value: null } },
            event: event('COUPON_LOCK_TIMED_OUT', 'coupon_id'),
          },
        ],
      },
      order,
      {
        name: 'ticket',
        table: 'tickets',
        id: 'id',
        status: { column: 'state', type: 'integer', values: [0, 1, 2] },
        transitions: [
          {
            name: 'closed',
            from: [0, 1],
            to: 2,
            due: { column: 'close_at', kind: 'epoch_s' },
            index: 'idx_tickets_due',
            event: event('TICKET_CLOSED', 'ticket_id'),
          },
        ],
      },
    ],
  },
  'test catalogue',
);

function harness() {
  const switches = fakeSwitches();
  const calls: Array<{ ref: string; ids: string[] }> = [];
  const batches: string[] = [];
  const sink = new ExpirerSink({
    catalogue,
    expireBatch: async (t: Transition, entries: readonly ScheduledEntry[]): Promise<BatchOutcome> => {
      calls.push({ ref: t.ref, ids: entries.map((e) => e.id) });
      return { transitioned: entries.map((e) => ({ id: e.id, dueAtMs: e.expireAtMs })), notYetDue: [], stale: [], dbNowMs: Date.now() };
    },
    clock,
    maxBatchSize: 100,
    maxConcurrentBatches: 10,
    backoff: { baseMs: 100, maxMs: 1_000 },
    maxAttempts: 3,
    cutOverGraceMs: 10_000,
    park: async () => undefined,
    logger: createLogger('silent'),
    gate: createTransitionGate(switches.reader, clock),
    observer: { batch: (entity) => void batches.push(entity) },
  });
  const done: string[] = [];
  const take = (entity: string, transition: string, id: string) => sink.take(heldMessage({ entity, transition, id, expireAtMs: T0 }), () => done.push(id));
  return { sink, switches, calls, done, take, batches };
}

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

test('entries of one entity but two transitions go in two batches, each of one transition', async () => {
  const h = harness();
  h.take('coupon', 'expired', '1');
  h.take('coupon', 'lock_timeout', '2');
  h.take('coupon', 'expired', '3');
  h.take('ticket', 'closed', '4');
  h.take('order', 'cancelled', '5');
  await jest.advanceTimersByTimeAsync(0);
  expect(h.calls.sort((a, b) => a.ref.localeCompare(b.ref))).toEqual([
    { ref: 'coupon.expired', ids: ['1', '3'] },
    { ref: 'coupon.lock_timeout', ids: ['2'] },
    { ref: 'order.cancelled', ids: ['5'] },
    { ref: 'ticket.closed', ids: ['4'] },
  ]);
  expect(h.done.sort()).toEqual(['1', '2', '3', '4', '5']);
  expect(h.batches.sort()).toEqual(['coupon', 'coupon', 'order', 'ticket']); // metric labels: the entity
});

test('pausing an entity holds every transition of it; the other entities fire', async () => {
  const h = harness();
  h.switches.pause('coupon');
  h.take('coupon', 'expired', '1');
  h.take('coupon', 'lock_timeout', '2');
  h.take('ticket', 'closed', '3');
  await jest.advanceTimersByTimeAsync(1_000);
  expect(h.calls).toEqual([{ ref: 'ticket.closed', ids: ['3'] }]);
  expect(h.sink.dueCount(Date.now())).toBe(2);
  h.switches.resume('coupon');
  await jest.advanceTimersByTimeAsync(0);
  expect(h.calls.map((c) => c.ref).sort()).toEqual(['coupon.expired', 'coupon.lock_timeout', 'ticket.closed']);
  expect(h.done.sort()).toEqual(['1', '2', '3']);
});

test('an entry of a transition the catalogue does not hold is refused (it was checked at decoding)', () => {
  const h = harness();
  expect(() => h.take('coupon', 'vanished', '1')).toThrow(RangeError);
  expect(h.sink.waiting).toBe(0);
});
