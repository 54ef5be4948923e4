/**
 * The plans of every statement built from every shipped entities file, on the real server:
 * entities/default.json on the demo tables the migrations create, and examples/shop/entities.json
 * on examples/shop/schema.sql. Whatever a file says, the statements keep today's properties:
 *   - the expiry transaction's locking read and guarded update address rows by PRIMARY key;
 *   - an effect's locking read goes through the index the file names for it;
 *   - the scanner's page and backfill's page are ranges of the transition's (status, due, id)
 *     index, read in index order (no filesort), for every from-state.
 * Each table holds rows enough that a scan is a real choice for the optimizer.
 *
 * @mysql
 * @lane isolated
 */
import { join } from 'node:path';
import type { Knex } from 'knex';
import type { EntityCatalogue, Transition } from '../../../src/core/entity-catalogue';
import { entityOf } from '../../../src/core/entity-catalogue';
import { transitionStatements } from '../../../src/expire/transition-batch';
import { dueValueOf } from '../../../src/db/due-value';
import { loadEntities } from '../../../src/ops/load-entities';
import { scanPageSql } from '../../../src/reconcile/sql/claim-scan-page';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { keysetShape } from '../../../src/reconcile/sql/due-keyset';
import { pageQuery } from '../../../src/reconcile/sql/read-expirable-page';
import { createTablesFrom } from '../../support/sql-file';
import { explainJson, FILESORT, firstTableOf } from '../../support/explain';
import { createTestDatabase, TestDatabase } from '../../support/test-database';

const root = join(__dirname, '../../..');
const shipped: ReadonlyArray<{ file: string; schema: string | null }> = [
  { file: 'entities/default.json', schema: null }, // the migrations' demo tables
  { file: 'examples/shop/entities.json', schema: 'examples/shop/schema.sql' },
];

type Access = { access_type?: string; key?: string };

async function accessOf(db: Knex, sql: string, bindings: readonly unknown[]): Promise<{ access: Access; text: string }> {
  const text = await explainJson(db, sql, bindings);
  return { access: (firstTableOf(text) ?? {}) as Access, text };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1));

/** Rows of every from-state and of the to-state, due around now, so every index range has data. */
async function fill(db: Knex, catalogue: EntityCatalogue): Promise<void> {
  for (const entity of catalogue.entities) {
    const [columns] = (await db.raw(
      'SELECT COLUMN_NAME AS c, DATA_TYPE AS t, IS_NULLABLE AS n, COLUMN_DEFAULT AS d, EXTRA AS x FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [entity.table],
    )) as [Array<{ c: string; t: string; n: string; d: unknown; x: string }>];
    const states = [...new Set(entity.transitions.flatMap((t) => [...t.from, t.to]))];
    const rows = Array.from({ length: 3_000 }, (_, i) => {
      const row: Record<string, unknown> = {};
      for (const col of columns) {
        if (col.x.includes('auto_increment')) continue;
        // Nullable columns half NULL (an effect's link column: both kinds of row in its index).
        if (col.n === 'YES' && i % 2 === 0 && !entity.transitions.some((t) => t.due.column === col.c)) continue;
        if (col.d !== null && col.c !== entity.status.column) continue;
        const due = entity.transitions.find((t) => t.due.column === col.c);
        if (col.c === entity.idColumn) row[col.c] = i + 1;
        else if (col.c === entity.status.column) row[col.c] = states[i % states.length];
        else if (due !== undefined) row[col.c] = dueValueOf(due.due.kind, Date.now() - 60_000 + i * 100);
        else if (/int/.test(col.t)) row[col.c] = i;
        else if (/date|time/.test(col.t)) row[col.c] = new Date();
        else row[col.c] = col.t === 'decimal' ? '1.00' : `v${i}`;
      }
      return row;
    });
    for (let i = 0; i < rows.length; i += 500) await db(entity.table).insert(rows.slice(i, i + 500));
    await db.raw(`ANALYZE TABLE \`${entity.table}\``);
  }
}

describe.each(shipped)('$file', ({ file, schema }) => {
  const catalogue = loadEntities(join(root, file));
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase(`plans-${file.split('/')[0]}`, { migrate: true });
    if (schema !== null) await createTablesFrom(database.db, join(root, schema));
    await fill(database.db, catalogue);
  });

  afterAll(async () => {
    await database?.drop();
  });

  test.each(catalogue.transitions.map((t) => [t.ref, t] as const))(
    '%s: the batch is locked and updated by primary key, effects through their index',
    async (_ref, t: Transition) => {
      const statements = transitionStatements(catalogue, t);
      const lock = await accessOf(database.db, statements.lock, [ids(2_000), [...t.from]]);
      expect(lock.access).toMatchObject({ key: 'PRIMARY' });
      expect(lock.access.access_type).not.toBe('ALL');
      // The guarded update's bindings: the to-state and assignments, then ids, the from-set and db-now.
      const values = [t.to, ...t.set.map((a) => (a.kind === 'value' ? a.value : a.kind === 'now' ? dueValueOf(a.unit, Date.now()) : a.by))];
      const update = await accessOf(database.db, statements.update, [...values, ids(2_000), [...t.from], dueValueOf(t.due.kind, Date.now())]);
      expect(update.access).toMatchObject({ key: 'PRIMARY' });
      for (const [k, fx] of t.effects.entries()) {
        const effect = await accessOf(database.db, statements.effects[k]!.lock, [ids(2_000), [...fx.from]]);
        expect(effect.access).toMatchObject({ key: fx.index });
        expect(effect.access.access_type).not.toBe('ALL');
      }
    },
  );

  test.each(scanCursorsOf(catalogue).map((c) => [c.key, c] as const))(
    'cursor %s: the scanner and backfill pages are ranges of the index, in its order',
    async (_key, cursor) => {
      const { transition: t } = cursor;
      const due = (ms: number) => dueValueOf(t.due.kind, ms);
      const shape = keysetShape(entityOf(catalogue, t.entity), t, cursor.location);
      const backfill = pageQuery(shape, cursor.from, { since: new Date(0), until: new Date() }, { expireAtMs: 0, id: '0' }, 500);
      for (const [sql, bindings] of [
        [scanPageSql(cursor), [cursor.from, due(Date.now()), due(0), due(0), '0', 500]],
        [backfill.sql, backfill.bindings],
      ] as const) {
        const plan = await accessOf(database.db, sql, bindings);
        expect(plan.access).toMatchObject({ access_type: 'range', key: t.index });
        expect(plan.text).not.toMatch(FILESORT);
      }
    },
  );
});
