/**
 * The statements the expiry transaction builds from the entities file: for the default file the
 * same statements as the hand-written ones they replace (same tables, indexes forced and
 * predicates; `IN (?)` with the from-set instead of `= 'ACTIVE'`), only quoted identifiers taken
 * from the file, and every value bound — checked on the text and on a run against a fake driver.
 */
import type { Knex } from 'knex';
import { transitionOf, type EntityCatalogue } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import type { OutboxInsert, OutboxWriter } from '../../../src/publish/outbox-writer';
import { createTransitionBatches, GuardMismatch, transitionStatements } from '../../../src/expire/transition-batch';
import defaultEntities from '../../../entities/default.json';

const catalogue = parseEntityFile(defaultEntities, 'entities/default.json');
const couponExpired = transitionOf(catalogue, 'coupon', 'expired');
const orderCancelled = transitionOf(catalogue, 'order', 'cancelled');

test('the default file builds the statements the hand-written coupon expiry and order cancellation ran', () => {
  expect(transitionStatements(catalogue, couponExpired)).toEqual({
    lock: 'SELECT `id`, `status`, `expire_time`, `user_id`, `version` FROM `coupons` FORCE INDEX (PRIMARY) WHERE `id` IN (?) AND `status` IN (?) AND `expire_time` IS NOT NULL ORDER BY `id` FOR UPDATE',
    update:
      'UPDATE `coupons` FORCE INDEX (PRIMARY) SET `status` = ?, `expired_at` = ?, `version` = `version` + ? WHERE `id` IN (?) AND `status` IN (?) AND `expire_time` <= ?',
    effects: [],
  });
  expect(transitionStatements(catalogue, orderCancelled)).toEqual({
    lock: 'SELECT `id`, `status`, `expire_time`, `user_id`, `coupon_id`, `version` FROM `orders` FORCE INDEX (PRIMARY) WHERE `id` IN (?) AND `status` IN (?) AND `expire_time` IS NOT NULL ORDER BY `id` FOR UPDATE',
    update:
      'UPDATE `orders` FORCE INDEX (PRIMARY) SET `status` = ?, `cancel_time` = ?, `cancel_reason` = ?, `version` = `version` + ? WHERE `id` IN (?) AND `status` IN (?) AND `expire_time` <= ?',
    effects: [
      {
        lock: 'SELECT `id`, `locked_order_id` FROM `coupons` FORCE INDEX (`idx_coupons_locked_order`) WHERE `locked_order_id` IN (?) AND `status` IN (?) ORDER BY `id` FOR UPDATE',
        update:
          'UPDATE `coupons` FORCE INDEX (PRIMARY) SET `status` = ?, `locked_order_id` = ?, `version` = `version` + ? WHERE `id` IN (?) AND `status` IN (?)',
      },
    ],
  });
});

/** Every identifier the file names (tables, columns, indexes). */
function fileIdentifiers(c: EntityCatalogue): Set<string> {
  const names = new Set<string>();
  for (const e of c.entities) {
    [e.table, e.idColumn, e.status.column].forEach((n) => names.add(n));
    for (const t of e.transitions) {
      [t.due.column, t.index, ...t.set.map((a) => a.column)].forEach((n) => names.add(n));
      for (const fx of t.effects) [fx.column, fx.index, ...fx.set.map((a) => a.column)].forEach((n) => names.add(n));
      for (const f of t.event.fields) if (f.source === 'column') names.add(f.column);
    }
  }
  return names;
}

const KEYWORDS = new Set(['SELECT', 'FROM', 'FORCE', 'INDEX', 'PRIMARY', 'WHERE', 'IN', 'AND', 'ORDER', 'BY', 'FOR', 'UPDATE', 'SET', 'IS', 'NOT', 'NULL']);

test.each(catalogue.transitions.map((t) => [t.ref, t] as const))(
  '%s: only quoted identifiers from the file, keywords and placeholders; no literal',
  (_ref, t) => {
    const s = transitionStatements(catalogue, t);
    const known = fileIdentifiers(catalogue);
    for (const sql of [s.lock, s.update, ...s.effects.flatMap((fx) => [fx.lock, fx.update])]) {
      const quoted = [...sql.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
      expect(quoted.filter((q) => !known.has(q))).toEqual([]);
      const rest = sql.replace(/`[^`]*`/g, ' ').replace(/[?(),=<+]/g, ' ');
      expect(rest.split(/\s+/).filter((w) => w !== '' && !KEYWORDS.has(w))).toEqual([]); // no bare name, number or string
      expect(sql).not.toMatch(/['"]/);
    }
  },
);

type Call = { sql: string; bindings: readonly unknown[] };
const NOW = 1_700_000_000_123;
const DUE = NOW - 5_000;
const BIG = '9007199254740993';
const MAX_SIGNED = '9223372036854775807';
const type = (name: string, columnType: number) => ({ name, columnType });

/** One call of the outbox writer: its transaction, its rows, and how many statements had run before it. */
type Write = { trx: unknown; rows: readonly OutboxInsert[]; after: number };

/**
 * A driver that answers each statement of the transaction as MariaDB would for these rows, and
 * an outbox writer that takes every event (its encoding and insert are outbox-writer.test.ts's).
 */
function fakeDb(opts: { moved?: (ids: readonly unknown[]) => number } = {}) {
  const calls: Call[] = [];
  const writes: Write[] = [];
  const raw = async (sql: string, bindings: readonly unknown[] = []): Promise<unknown> => {
    calls.push({ sql, bindings });
    if (sql.startsWith('SELECT NOW(3)')) return [[{ now: new Date(NOW) }]];
    if (sql.startsWith('SELECT `id`, `status`, `expire_time`, `user_id`, `version` FROM `coupons`')) {
      return [
        [{ id: 5, status: 'ACTIVE', expire_time: new Date(DUE), user_id: MAX_SIGNED, version: 0 }],
        [type('id', 8), type('status', 253), type('expire_time', 12), type('user_id', 8), type('version', 3)],
      ];
    }
    if (sql.startsWith('SELECT `id`, `status`, `expire_time`, `user_id`, `coupon_id`, `version` FROM `orders`')) {
      const rows = [
        { id: 7, status: 'UNPAID', expire_time: new Date(DUE), user_id: 9, coupon_id: BIG, version: 4 },
        { id: 8, status: 'UNPAID', expire_time: new Date(DUE), user_id: 9, coupon_id: null, version: 0 },
      ];
      return [rows, [type('id', 8), type('status', 253), type('expire_time', 12), type('user_id', 8), type('coupon_id', 8), type('version', 3)]];
    }
    if (sql.startsWith('SELECT `id`, `locked_order_id` FROM `coupons`'))
      return [[{ id: BIG, locked_order_id: 7 }], [type('id', 8), type('locked_order_id', 8)]];
    if (sql.startsWith('UPDATE')) return [{ affectedRows: (opts.moved ?? ((x) => x.length))(idsOf(sql, bindings)) }];
    throw new Error(`unexpected statement ${sql}`);
  };
  const trx = { raw };
  const db = { transaction: async (fn: (t: unknown) => Promise<unknown>) => fn(trx) } as unknown as Knex;
  const outbox: OutboxWriter = async (t, rows) => {
    writes.push({ trx: t, rows, after: calls.length });
    return rows.length;
  };
  return { db, calls, trx, writes, batches: () => createTransitionBatches(db, catalogue, { outbox }) };
}

const placeholders = (sql: string): number => (sql.match(/\?/g) ?? []).length;
/** The ids a statement names: the literal list after `id` IN (the transition's own rows), else the first bound array. */
const idsOf = (sql: string, bindings: readonly unknown[]): readonly unknown[] => {
  const literal = /`id` IN \(([0-9][0-9, ]*)\)/.exec(sql);
  return literal ? literal[1]!.split(', ') : ((bindings.find(Array.isArray) as unknown[] | undefined) ?? []);
};
const outboxPayloads = (writes: readonly Write[]) => writes.flatMap((w) => w.rows.map((r) => r.event));

test('every statement of a run binds every value but the batch ids, which are integer literals: one binding per placeholder, statuses and constants among them', async () => {
  const { calls, trx, writes, batches } = fakeDb();
  await batches().run(
    orderCancelled,
    [
      { id: '7', expireAtMs: DUE },
      { id: '8', expireAtMs: DUE },
    ],
    'stream',
  );
  for (const c of calls) expect([c.sql, c.bindings.length]).toEqual([c.sql, placeholders(c.sql)]);
  const [lock, , update, effectLock, effectUpdate] = calls;
  expect(lock!.sql).toContain('WHERE `id` IN (7, 8) AND `status` IN (?)');
  expect(lock!.bindings).toEqual([['UNPAID']]);
  expect(update!.sql).toContain('WHERE `id` IN (7, 8) AND `status` IN (?)');
  expect(update!.bindings).toEqual(['CANCELLED', new Date(NOW), 'TIMEOUT', 1, ['UNPAID'], new Date(NOW)]);
  expect(effectLock!.bindings).toEqual([['7', '8'], ['LOCKED']]);
  expect(effectUpdate!.bindings).toEqual(['ACTIVE', null, 1, [BIG], ['LOCKED']]);
  expect(calls.map((c) => c.sql.slice(0, 12))).toEqual(['SELECT `id`,', 'SELECT NOW(3', 'UPDATE `orde', 'SELECT `id`,', 'UPDATE `coup']);
  // Then the events, once, in the same transaction, after every statement of it.
  expect(writes.map((w) => [w.trx === trx, w.rows.length, w.after])).toEqual([[true, 2, 5]]);
});

test('the payloads are exactly the COUPON_EXPIRED and ORDER_CANCELLED of before: ids as decimal strings, version + 1, the coupon released', async () => {
  const { writes, batches } = fakeDb();
  const run = batches();
  await run.run(couponExpired, [{ id: '5', expireAtMs: DUE }], 'scanner');
  await run.run(
    orderCancelled,
    [
      { id: '7', expireAtMs: DUE },
      { id: '8', expireAtMs: DUE },
    ],
    'stream',
  );
  // One writer call per transaction: each event's key and type, and the row it is about.
  expect(writes.map((w) => w.rows.flatMap((r) => [r.event.event_key, r.event.event_type, r.entityType, r.entityId]))).toEqual([
    [`coupon-expired-5-${DUE}-${NOW}`, 'COUPON_EXPIRED', 'coupon', '5'],
    [`order-cancelled-7-${DUE}-${NOW}`, 'ORDER_CANCELLED', 'order', '7', `order-cancelled-8-${DUE}-${NOW}`, 'ORDER_CANCELLED', 'order', '8'],
  ]);
  const common = { due_at: DUE, occurred_at: NOW };
  expect(outboxPayloads(writes)).toEqual([
    {
      event_key: `coupon-expired-5-${DUE}-${NOW}`,
      event_type: 'COUPON_EXPIRED',
      coupon_id: '5',
      user_id: MAX_SIGNED,
      from_status: 'ACTIVE',
      to_status: 'EXPIRED',
      ...common,
      path: 'scanner',
      version: 1,
    },
    {
      event_key: `order-cancelled-7-${DUE}-${NOW}`,
      event_type: 'ORDER_CANCELLED',
      order_id: '7',
      user_id: '9',
      from_status: 'UNPAID',
      to_status: 'CANCELLED',
      reason: 'TIMEOUT',
      coupon_id: BIG,
      coupon_released: true,
      ...common,
      path: 'stream',
      version: 5,
    },
    {
      event_key: `order-cancelled-8-${DUE}-${NOW}`,
      event_type: 'ORDER_CANCELLED',
      order_id: '8',
      user_id: '9',
      from_status: 'UNPAID',
      to_status: 'CANCELLED',
      reason: 'TIMEOUT',
      coupon_id: null,
      coupon_released: false,
      ...common,
      path: 'stream',
      version: 1,
    },
  ]);
});

test('an UPDATE that moves fewer rows than the plan found due rolls back, retriable, before any event (I4)', async () => {
  const { calls, writes, batches } = fakeDb({ moved: () => 0 });
  const run = batches().run(couponExpired, [{ id: '5', expireAtMs: DUE }], 'stream');
  await expect(run).rejects.toBeInstanceOf(GuardMismatch);
  await expect(run).rejects.toMatchObject({ retriable: true });
  expect(calls.some((c) => c.sql.startsWith('UPDATE'))).toBe(true);
  expect(writes).toEqual([]);
});

test('a transition of another catalogue is refused', async () => {
  const { batches } = fakeDb();
  const other = parseEntityFile(
    { entities: [{ ...defaultEntities.entities[0], transitions: [{ ...defaultEntities.entities[0]!.transitions[0], name: 'gone' }] }] },
    'other',
  );
  await expect(batches().run(transitionOf(other, 'coupon', 'gone'), [], 'stream')).rejects.toBeInstanceOf(RangeError);
});
