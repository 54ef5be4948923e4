/**
 * The effective view (`timebucket sql effective-view`, db/sql/effective-view.ts) on the real
 * server: a due coupon still ACTIVE reads EXPIRED to the millisecond, before any expiry runs and
 * whatever the reader's session time zone; once the expiry transaction has moved the rows, the
 * view and the table agree on every row. The view is SQL SECURITY INVOKER over its listed
 * columns: an account allowed the view but not the table's columns reads nothing through it.
 * Status values with a quote, a backslash and a multibyte character come through exactly, the
 * printed script run by a GBK, SJIS or BIG5 client and under NO_BACKSLASH_ESCAPES.
 *
 * @mysql
 * @lane isolated
 */
import { entityOf, transitionOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { createDb } from '../../../src/db/knex';
import { EFFECTIVE_VIEW_PREAMBLE, effectiveViewSql } from '../../../src/db/sql/effective-view';
import { config } from '../../support/stack';
import type { OutboxWriter } from '../../../src/publish/outbox-writer';
import { createTransitionBatches } from '../../../src/expire/transition-batch';
import { defaultCatalogue } from '../../support/catalogue';
import { eventWriter } from '../../support/event-writer';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

let database: TestDatabase;
let outbox: OutboxWriter;
const coupon = entityOf(defaultCatalogue, 'coupon');

beforeAll(async () => {
  database = await createTestDatabase('effective-view');
  await database.db.raw(effectiveViewSql(coupon, coupon.locations[0]!, new Map([['expired', 'datetime']])));
  outbox = await eventWriter(database.db, defaultCatalogue);
});

afterAll(async () => {
  await database?.drop();
});

type Row = { id: number; status: string; effective_status: string };

async function view(timeZone = '+00:00'): Promise<Row[]> {
  // One connection, its session zone set first: the view must not depend on it.
  return database.db.transaction(async (trx) => {
    await trx.raw('SET time_zone = ?', [timeZone]);
    const [rows] = (await trx.raw('SELECT id, status, effective_status FROM coupons_effective ORDER BY id')) as [Row[]];
    // The pool's connections keep their session zone: give this one back as the pool set it.
    await trx.raw("SET time_zone = '+00:00'");
    return rows;
  });
}

test('EXPIRED before the stream gets to it, for a due ACTIVE row only; equal to the table once it has', async () => {
  const db = database.db;
  const [now] = ((await db.raw('SELECT NOW(3) AS now')) as [Array<{ now: Date }>])[0];
  const at = (ms: number) => new Date(now!.now.getTime() + ms);
  const insert = async (status: string, dueInMs: number) => (await db('coupons').insert({ user_id: 1, status, expire_time: at(dueInMs) }))[0]!;
  const due = await insert('ACTIVE', -1);
  const notYet = await insert('ACTIVE', 600_000);
  const used = await insert('USED', -60_000);
  const locked = await insert('LOCKED', -60_000);

  const expected = [
    { id: due, status: 'ACTIVE', effective_status: 'EXPIRED' },
    { id: notYet, status: 'ACTIVE', effective_status: 'ACTIVE' },
    { id: used, status: 'USED', effective_status: 'USED' },
    { id: locked, status: 'LOCKED', effective_status: 'LOCKED' },
  ];
  expect(await view()).toEqual(expected);
  expect(await view('+08:00')).toEqual(expected);
  expect(await view('-07:00')).toEqual(expected);

  const batches = createTransitionBatches(db, defaultCatalogue, { outbox });
  const outcome = await batches.run(
    transitionOf(defaultCatalogue, 'coupon', 'expired'),
    [due, notYet, used, locked].map((id, i) => ({ id: String(id), expireAtMs: at([-1, 600_000, -60_000, -60_000][i]!).getTime() })),
    'scanner',
  );
  expect(outcome.transitioned.map((t) => t.id)).toEqual([String(due)]);
  const caughtUp = await view();
  expect(caughtUp.map((r) => r.effective_status)).toEqual(caughtUp.map((r) => r.status));
  expect(caughtUp.find((r) => r.id === due)).toEqual({ id: due, status: 'EXPIRED', effective_status: 'EXPIRED' });
});

const serviceUser = process.env['TB_DB_SERVICE_USER'] ?? 'timebucket_app';
const servicePassword = process.env['TB_DB_SERVICE_PASSWORD'] ?? 'svc-pw-7Qx2vL9k';

test('SQL SECURITY INVOKER over the id, the status and the due column: the view gives no one a column the table keeps from them', async () => {
  const [[view]] = (await database.db.raw(
    "SELECT SECURITY_TYPE AS s FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'coupons_effective'",
    [database.name],
  )) as [[{ s: string }]];
  expect(view.s).toBe('INVOKER');
  const [columns] = (await database.db.raw(
    "SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'coupons_effective' ORDER BY ORDINAL_POSITION",
    [database.name],
  )) as [Array<{ c: string }>];
  expect(columns.map((c) => c.c)).toEqual(['id', 'status', 'expire_time', 'effective_status']);

  // An account allowed the view alone: a definer's view would read the table for it.
  const grant = (verb: 'GRANT' | 'REVOKE', what: string, on: string) =>
    Promise.all(
      ['%', 'localhost'].map((host) =>
        database.db.raw(`${verb} ${what} ON \`${database.name}\`.\`${on}\` ${verb === 'GRANT' ? 'TO' : 'FROM'} ?@?`, [serviceUser, host]),
      ),
    );
  const reader = createDb({ ...config.db, user: serviceUser, password: servicePassword, poolMax: 1 }, { database: database.name });
  try {
    await grant('GRANT', 'SELECT', 'coupons_effective');
    await expect(reader.raw('SELECT id, effective_status FROM coupons_effective LIMIT 1')).rejects.toMatchObject({ errno: 1356 });
    await grant('GRANT', 'SELECT (`id`, `status`, `expire_time`)', 'coupons');
    await expect(reader.raw('SELECT id, effective_status FROM coupons_effective LIMIT 1')).resolves.toBeDefined();
  } finally {
    await grant('REVOKE', 'SELECT', 'coupons_effective');
    await grant('REVOKE', 'SELECT (`id`, `status`, `expire_time`)', 'coupons');
    await reader.destroy();
  }
});

test('status values with a quote, a backslash and a multibyte character: the printed SQL is run exactly by a GBK, SJIS or BIG5 client, and under NO_BACKSLASH_ESCAPES', async () => {
  // 待 is E5 BE 85 in UTF-8; to a GBK, SJIS or BIG5 reader 85 and the backslash after it are one
  // character, and a quote that should end a string is escaped instead.
  const [due, dueToo, later, odd] = ["it's", 'a\\b', '待\\', 'plain'];
  const catalogue = parseEntityFile(
    {
      entities: [
        {
          name: 'wallet',
          table: 'wallets',
          id: 'id',
          status: { column: 'state', type: 'string' },
          transitions: [
            {
              name: 'lapsed',
              from: [due, dueToo],
              to: later,
              due: { column: 'expire_time', kind: 'datetime' },
              index: 'idx_wallets',
              event: { type: 'W', ceType: 'w', avroName: 'x.W', idField: 'wallet_id', summary: 's' },
            },
          ],
        },
      ],
    },
    'wallets.json',
  );
  const db = database.db;
  await db.raw(
    'CREATE TABLE wallets (id BIGINT PRIMARY KEY, state VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, expire_time DATETIME(3) NOT NULL, KEY idx_wallets (state, expire_time, id))',
  );
  await db.raw(
    'INSERT INTO wallets VALUES (1, ?, UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE), (2, ?, UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE), (3, ?, UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE), (4, ?, UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)',
    [due, dueToo, odd, due],
  );
  const wallet = entityOf(catalogue, 'wallet');
  const view = effectiveViewSql(wallet, wallet.locations[0]!, new Map([['lapsed', 'datetime']]));

  const hex = (v: string) => Buffer.from(v, 'utf8').toString('hex').toUpperCase();
  const expected = [
    { id: 1, state: due, effective_status: later, bytes: hex(later) },
    { id: 2, state: dueToo, effective_status: later, bytes: hex(later) },
    { id: 3, state: odd, effective_status: odd, bytes: hex(odd) },
    { id: 4, state: due, effective_status: due, bytes: hex(due) },
  ];
  // The printed script run by a client in GBK, SJIS or BIG5 (it sends the script's bytes, which
  // the server reads in the session's character set: here, what such a client reads of them,
  // encoded back by the driver), or under NO_BACKSLASH_ESCAPES. One connection each, so the
  // session's settings hold for the script.
  const reader: Record<string, string> = { gbk: 'gbk', sjis: 'shift_jis', big5: 'big5', utf8mb4: 'utf-8' };
  for (const session of ['SET NAMES gbk', 'SET NAMES sjis', 'SET NAMES big5', "SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"]) {
    const client = createDb({ ...config.db, poolMax: 1 }, { database: database.name });
    try {
      await client.raw(session);
      for (const statement of [EFFECTIVE_VIEW_PREAMBLE, view]) {
        const [[cs]] = (await client.raw('SELECT @@character_set_client AS c')) as [[{ c: string }]];
        await client.raw(new TextDecoder(reader[cs.c]).decode(Buffer.from(statement, 'utf8')));
      }
    } finally {
      await client.destroy();
    }
    // The bytes too, not only what the driver decoded.
    const [rows] = (await db.raw('SELECT id, state, effective_status, HEX(effective_status) AS bytes FROM wallets_effective ORDER BY id')) as [unknown[]];
    expect({ session, rows }).toEqual({ session, rows: expected });
    await db.raw('DROP VIEW wallets_effective');
  }
});
