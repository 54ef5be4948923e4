/**
 * An entity's archive (core/entity-catalogue.ts Archive) against the database, per hot table:
 * the since column holds a time of its kind, the final states fit the status column, the mover's
 * index (status, since, id) exists on the hot table, and the archive table exists and can take
 * every row of the hot table as it is.
 *
 * "As it is": every column of the hot table is in the archive with the same type and nullability
 * (a narrower column would truncate or refuse the copy), the archive's primary key is the id
 * alone (the copy is idempotent on it) and not AUTO_INCREMENT (the archive takes the hot table's
 * ids, never makes its own), and a column only the archive has is nullable (the copy does not
 * write it). `timebucket migrate` creates a missing archive table that way
 * (db/sql/create-archive-table.ts); a table the team already has is checked the same.
 *
 * Pure, as entity-schema-check.ts, which calls it with each hot table it checks.
 */
import type { ColumnInfo, SchemaInfo, TableInfo } from './column-info';
import { comparableType, keysetIndexProblems, timeColumnProblems, valueProblems } from './column-value-checks';
import { qualified, type Archive, type Entity, type Location } from './entity-catalogue';

export function archiveProblems(
  schema: SchemaInfo,
  entity: Entity,
  archive: Archive,
  hot: Location,
  hotTable: TableInfo,
  schemaNames: Readonly<Record<string, string>>,
): string[] {
  const name = qualified(hot, schemaNames);
  const at = `${entity.name} archive (${name})`;
  const problems = [...timeColumnProblems(at, hotTable, archive.since.column, archive.since.kind, 'since')];
  const status = hotTable.columns.get(entity.status.column);
  if (status !== undefined) for (const v of archive.finalStates) problems.push(...valueProblems(at, status, v));
  problems.push(
    ...keysetIndexProblems(
      at,
      name,
      hotTable,
      archive.index,
      [entity.status.column, archive.since.column, entity.idColumn],
      "the archive's mover pages through (status, since, id)",
    ),
  );
  const target = archive.tables.find((t) => t.hot.key === hot.key)?.archive;
  if (target === undefined) return problems;
  const targetName = qualified(target, schemaNames);
  const archiveTable = schema.get(target.key);
  if (archiveTable === undefined)
    return [
      ...problems,
      `${at}: archive table ${targetName} does not exist; \`timebucket migrate\` creates it (CREATE TABLE ${targetName} LIKE ${name}, without AUTO_INCREMENT)`,
    ];
  return [...problems, ...archiveTableProblems(`${entity.name} archive (${targetName})`, name, hotTable, archiveTable, entity.idColumn)];
}

function archiveTableProblems(at: string, hotName: string, hot: TableInfo, archive: TableInfo, idColumn: string): string[] {
  const problems: string[] = [];
  const shape = (c: ColumnInfo) => `${c.columnType}${c.nullable ? ' NULL' : ' NOT NULL'}`;
  for (const h of hot.columns.values()) {
    const a = archive.columns.get(h.name);
    if (a === undefined) problems.push(`${at}: column ${h.name} of ${hotName} is missing (ALTER TABLE … ADD COLUMN ${h.name} ${shape(h)})`);
    else if (comparableType(a) !== comparableType(h) || a.nullable !== h.nullable)
      problems.push(`${at}: column ${h.name} is ${shape(a)} but ${shape(h)} in ${hotName}; the archive takes its rows as they are`);
  }
  for (const a of archive.columns.values())
    if (!hot.columns.has(a.name) && !a.nullable)
      problems.push(`${at}: column ${a.name} is not in ${hotName} and NOT NULL; the copy would not fill it: make it NULL`);
  const pk = archive.indexes.find((i) => i.name === 'PRIMARY');
  if (pk === undefined || pk.columns.length !== 1 || pk.columns[0] !== idColumn)
    problems.push(
      `${at}: the primary key is ${pk === undefined ? 'missing' : `(${pk.columns.join(', ')})`}; it must be the id ${idColumn} alone (the copy is idempotent on it)`,
    );
  if (archive.columns.get(idColumn)?.autoIncrement === true)
    problems.push(`${at}: id column ${idColumn} is AUTO_INCREMENT; the archive takes the hot table's ids: ALTER TABLE … MODIFY ${idColumn} without it`);
  return problems;
}
