/**
 * What a column can hold: whether a declared value (a status, an assigned value) is stored as
 * is (no truncation, no conversion), and which column types an assignment, a due or since time
 * or an event's payload needs; a column's type as two servers compare it; the (status, time, id)
 * indexes keyset pages read through. Pure: the columns come in as information_schema describes them
 * (core/column-info.ts); the entities' schema check (core/entity-schema-check.ts) asks.
 */
import type { ColumnInfo, TableInfo } from './column-info';
import type { Assignment, DueKind, StatusValue } from './entity-catalogue';

export const INTEGER = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint']);
export const CHARACTER = new Set(['char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'enum']);
export const DATETIME = new Set(['datetime', 'timestamp']);
/**
 * Payload columns the events can carry (publish/derived-schema.ts maps each to an Avro type).
 * Not DATE or BIT yet: the driver hands them over as a Date and a Buffer, which the outbox
 * payload (expire/row-values.ts) does not carry as their schema types.
 */
export const PAYLOAD = new Set([...INTEGER, ...CHARACTER, ...DATETIME, 'decimal', 'double', 'float', 'set']);

/** Integer ranges by type: [signed min, signed max, unsigned max]. */
const RANGES: Readonly<Record<string, readonly [bigint, bigint, bigint]>> = {
  tinyint: [-128n, 127n, 255n],
  smallint: [-32768n, 32767n, 65535n],
  mediumint: [-8388608n, 8388607n, 16777215n],
  int: [-2147483648n, 2147483647n, 4294967295n],
  integer: [-2147483648n, 2147483647n, 4294967295n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 64n - 1n],
};

/** Whether a declared value can be stored in the column as is (no truncation, no conversion). */
export function valueProblems(at: string, c: ColumnInfo, v: StatusValue | null): string[] {
  const shown = JSON.stringify(v);
  if (v === null) return c.nullable ? [] : [`${at}: column ${c.name} is NOT NULL; it cannot be set to null`];
  if (typeof v === 'number') {
    const range = RANGES[c.dataType];
    if (range === undefined) return [`${at}: ${shown} is a number but column ${c.name} is ${c.columnType}`];
    const unsigned = /\bunsigned\b/i.test(c.columnType);
    const [min, max] = unsigned ? [0n, range[2]] : [range[0], range[1]];
    return BigInt(v) < min || BigInt(v) > max ? [`${at}: ${shown} does not fit column ${c.name} (${c.columnType})`] : [];
  }
  if (!CHARACTER.has(c.dataType)) return [`${at}: ${shown} is a string but column ${c.name} is ${c.columnType}`];
  if (c.dataType === 'enum' && !enumValues(c.columnType).includes(v)) return [`${at}: ${shown} is not a value of column ${c.name} (${c.columnType})`];
  if (c.maxChars !== null && [...v].length > c.maxChars) return [`${at}: ${shown} is longer than column ${c.name} (${c.columnType}) holds`];
  // eslint-disable-next-line no-control-regex
  if (c.charset !== null && !c.charset.startsWith('utf8') && /[^\x00-\x7f]/.test(v))
    return [`${at}: ${shown} is not ASCII but column ${c.name} is ${c.charset}; use utf8mb4`];
  return [];
}

export function assignmentProblems(at: string, table: TableInfo, set: readonly Assignment[]): string[] {
  const problems: string[] = [];
  for (const a of set) {
    const c = table.columns.get(a.column);
    if (c === undefined) {
      problems.push(`${at}: assigned column ${a.column} does not exist`);
      continue;
    }
    if (a.kind === 'value') problems.push(...valueProblems(at, c, a.value));
    else if (a.kind === 'increment' && !INTEGER.has(c.dataType))
      problems.push(`${at}: column ${a.column} is ${c.columnType}; only an integer column can be incremented`);
    else if (a.kind === 'now' && a.unit === 'datetime' && !DATETIME.has(c.dataType))
      problems.push(`${at}: column ${a.column} is ${c.columnType}; now as datetime needs DATETIME or TIMESTAMP`);
    else if (a.kind === 'now' && a.unit === 'epoch_ms' && c.dataType !== 'bigint')
      problems.push(`${at}: column ${a.column} is ${c.columnType}; now as epoch_ms needs BIGINT`);
    else if (a.kind === 'now' && a.unit === 'epoch_s' && !(c.dataType === 'bigint' || (c.dataType === 'int' && /\bunsigned\b/i.test(c.columnType)))) {
      problems.push(`${at}: column ${a.column} is ${c.columnType}; now as epoch_s needs BIGINT or INT UNSIGNED`);
    }
  }
  return problems;
}

function enumValues(columnType: string): string[] {
  const body = /^enum\((.*)\)$/is.exec(columnType)?.[1] ?? '';
  return [...body.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1]!.replace(/''/g, "'"));
}

/**
 * A column's type as two servers that agree on it print it: an integer's display width dropped.
 * MariaDB prints `bigint(20) unsigned` where MySQL 8.0.19 and later print `bigint unsigned` for
 * the same DDL (a set over one server of each is what a move between them looks like), and a
 * width changes nothing a value can hold.
 */
export function comparableType(c: ColumnInfo): string {
  return INTEGER.has(c.dataType) ? c.columnType.replace(/^(\w+)\(\d+\)/, '$1') : c.columnType;
}

/**
 * A column holding a time of `kind`: a due column, an archive's since column. `role` names it in
 * the message.
 */
export function timeColumnProblems(at: string, table: TableInfo, column: string, kind: DueKind, role: 'due' | 'since'): string[] {
  const due = table.columns.get(column);
  if (due === undefined) return [`${at}: ${role} column ${column} does not exist`];
  if (kind === 'datetime' && !DATETIME.has(due.dataType))
    return [`${at}: ${role} column ${due.name} is ${due.columnType}; kind datetime needs DATETIME or TIMESTAMP (or declare epoch_ms / epoch_s)`];
  if (role === 'due' && kind === 'datetime' && /^datetime\(([4-6])\)/i.test(due.columnType)) {
    // Debezium encodes DATETIME(4-6) in µs (MicroTimestamp), and the schema-less CDC JSON the stack
    // configures cannot say so: the decoder would read µs as ms. TIMESTAMP(n) arrives as ISO text.
    return [
      `${at}: ${role} column ${due.name} is ${due.columnType}; use DATETIME(0) to DATETIME(3) or TIMESTAMP (microsecond DATETIME is not decoded exactly from schema-less CDC)`,
    ];
  }
  if (kind !== 'datetime' && due.dataType !== 'bigint' && !(kind === 'epoch_s' && INTEGER.has(due.dataType))) {
    return [`${at}: ${role} column ${due.name} is ${due.columnType}; kind ${kind} needs ${kind === 'epoch_ms' ? 'BIGINT' : 'an integer type'}`];
  }
  return [];
}

/**
 * The index `name` a keyset page reads through: `[status, time, id]`, the id optional (InnoDB
 * appends the primary key to every secondary index). `reader` says who pages through it, in the
 * message that names the CREATE INDEX to run on `table` (as `tableName`).
 */
export function keysetIndexProblems(
  at: string,
  tableName: string,
  table: TableInfo,
  name: string,
  columns: readonly [string, string, string],
  reader: string,
): string[] {
  const index = table.indexes.find((i) => i.name === name);
  const [status, time, id] = columns;
  if (index !== undefined && index.columns[0] === status && index.columns[1] === time && (index.columns.length === 2 || index.columns[2] === id)) return [];
  const found = index === undefined ? 'does not exist' : `is on (${index.columns.join(', ')})`;
  return [`${at}: index ${name} ${found}; ${reader}: CREATE INDEX ${name} ON ${tableName} (${columns.join(', ')})`];
}
