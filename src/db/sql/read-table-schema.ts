/**
 * Reads, from information_schema, the columns and indexes of the tables the entities file maps
 * in the connection's database. Inputs: table names. Output: SchemaInfo (core/column-info.ts);
 * a table that does not exist is absent from it.
 * Safe to re-run: plain reads of the data dictionary. The same statements on MySQL 8 and
 * MariaDB: COLUMNS and STATISTICS have these columns on both (MySQL 8 returns the names in
 * upper case, hence the aliases).
 */
import type { Knex } from 'knex';
import type { ColumnInfo, IndexInfo, SchemaInfo, TableInfo } from '../../core/column-info';

type ColumnRow = { t: string; c: string; dt: string; ct: string; n: string; ml: number | string | null; cs: string | null; x: string | null };
type IndexRow = { t: string; i: string; c: string; nu: number | string };

export async function readTableSchema(db: Knex, tables: readonly string[]): Promise<SchemaInfo> {
  if (tables.length === 0) return new Map();
  const [columns] = (await db.raw(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, DATA_TYPE AS dt, COLUMN_TYPE AS ct, IS_NULLABLE AS n,
            CHARACTER_MAXIMUM_LENGTH AS ml, CHARACTER_SET_NAME AS cs, EXTRA AS x
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?) ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [[...tables]],
  )) as [ColumnRow[]];
  const [indexes] = (await db.raw(
    `SELECT TABLE_NAME AS t, INDEX_NAME AS i, COLUMN_NAME AS c, NON_UNIQUE AS nu
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?) ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    [[...tables]],
  )) as [IndexRow[]];
  const byTable = new Map<string, { columns: Map<string, ColumnInfo>; indexes: Map<string, { columns: string[]; unique: boolean }> }>();
  const tableOf = (name: string) => {
    let t = byTable.get(name);
    if (t === undefined) byTable.set(name, (t = { columns: new Map(), indexes: new Map() }));
    return t;
  };
  for (const r of columns) {
    tableOf(r.t).columns.set(r.c, {
      name: r.c,
      dataType: String(r.dt).toLowerCase(),
      columnType: String(r.ct),
      nullable: r.n === 'YES',
      maxChars: r.ml === null ? null : Number(r.ml),
      charset: r.cs,
      autoUpdated: /on update/i.test(r.x ?? ''),
      autoIncrement: /auto_increment/i.test(r.x ?? ''),
      // `VIRTUAL GENERATED` / `STORED GENERATED` on both servers (MySQL's DEFAULT_GENERATED is an expression default, not one).
      generated: /\b(VIRTUAL|STORED|PERSISTENT) GENERATED\b/i.test(r.x ?? ''),
    });
  }
  for (const r of indexes) {
    const t = tableOf(r.t);
    const index = t.indexes.get(r.i) ?? { columns: [], unique: Number(r.nu) === 0 };
    index.columns.push(r.c);
    t.indexes.set(r.i, index);
  }
  const schema = new Map<string, TableInfo>();
  for (const [name, t] of byTable) {
    const list: IndexInfo[] = [...t.indexes].map(([i, x]) => ({ name: i, columns: x.columns, unique: x.unique }));
    schema.set(name, { name, columns: t.columns, indexes: list });
  }
  return schema;
}
