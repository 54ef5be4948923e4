/**
 * The status a reader should see (seed 001 §2.2, the "lazy check", as a complement to the
 * stream): per table, a view whose `effective_status` is a transition's `to` once its due time
 * has passed by the database clock for a row still in one of its from-states, else the stored
 * status. Exact to the millisecond whatever the stream's lag; the stream then writes the same
 * status and emits the event.
 *
 * The clock matches how timebucket reads each due kind and never reads the reader's session
 * time zone: DATETIME holds UTC wall-clock time (compared with UTC_TIMESTAMP(3)); TIMESTAMP and
 * epoch columns compare as epoch milliseconds (UNIX_TIMESTAMP of a TIMESTAMP column is its
 * stored instant; now is UTC_TIMESTAMP(3)'s distance from the epoch). MySQL 8 and MariaDB both
 * have these functions.
 *
 * Where an entity has several transitions and more than one is due for a row, the earliest due
 * wins (the one the stream fires first), ties in file order.
 *
 * SQL SECURITY INVOKER over an explicit column list (the id, the status, each due column,
 * effective_status): a reader reads with its own privileges, so the view never opens a column
 * to someone the table keeps it from (a DEFINER view over t.* handed every column, personal
 * data included, to anyone allowed the view). A reader wanting more joins the table by id.
 *
 * Status values are not written as quoted text: `'…'` depends on how the client that runs the
 * script reads its bytes (a GBK, SJIS or BIG5 client reads a multibyte character's last byte and
 * the escaping backslash after it as one character, and the string runs on past its quote) and
 * on sql_mode (with NO_BACKSLASH_ESCAPES no escaping of a backslash is right in both modes). A
 * string is a hex literal with its character set, _utf8mb4 X'…': plain ASCII, the same bytes in
 * any client character set and sql_mode. An integer is its digits. The script starts with
 * SET NAMES utf8mb4 (EFFECTIVE_VIEW_PREAMBLE), and that is not optional: MySQL stores a view's
 * text with its strings written back as quoted text and parses it again, on every read, in the
 * character set of the client that created it; created by a GBK session, a value ending in such
 * a character breaks the view (test/integration/db/effective-view.test.ts runs the script so).
 */
import type { Entity, Location, StatusValue, Transition } from '../../core/entity-catalogue';
import { quoteId } from '../quote-id';

/** `dueTypes`: information_schema DATA_TYPE of each transition's due column, by transition name. */
export function effectiveViewSql(entity: Entity, location: Location, dueTypes: ReadonlyMap<string, string>): string {
  const status = `t.${quoteId(entity.status.column)}`;
  const dueNow = (t: Transition): string => {
    const col = due(t);
    return `${status} IN (${t.from.map(literal).join(', ')}) AND ${col} IS NOT NULL AND ${duePassed(t, dueTypes)}`;
  };
  const cases = entity.transitions.map((t, i) => {
    // Another transition due earlier (or as early and first in the file) wins.
    const others = entity.transitions.flatMap((o, j) =>
      j === i ? [] : [`NOT (${dueNow(o)} AND ${dueMs(o, dueTypes)} ${j < i ? '<=' : '<'} ${dueMs(t, dueTypes)})`],
    );
    return `    WHEN ${[dueNow(t), ...others].join(' AND ')} THEN ${literal(t.to)}`;
  });
  const shown = [...new Set([entity.idColumn, entity.status.column, ...entity.transitions.map((t) => t.due.column)])];
  return [
    `-- ${entity.name} on ${location.key}: the status a reader should see, exact whatever the stream's lag`,
    `CREATE OR REPLACE SQL SECURITY INVOKER VIEW ${quoteId(`${location.table}_effective`)} AS`,
    `SELECT ${shown.map((c) => `t.${quoteId(c)}`).join(', ')},`,
    '  CASE',
    ...cases,
    `    ELSE ${status}`,
    '  END AS effective_status',
    `FROM ${quoteId(location.table)} t;`,
  ].join('\n');
}

const due = (t: Transition): string => `t.${quoteId(t.due.column)}`;

/** The due time as epoch ms, to compare the due times of two transitions whatever their kinds. */
function dueMs(t: Transition, dueTypes: ReadonlyMap<string, string>): string {
  const col = due(t);
  if (t.due.kind === 'epoch_ms') return col;
  if (t.due.kind === 'epoch_s') return `${col} * 1000`;
  // DATETIME holds UTC wall-clock time: its distance from the epoch. UNIX_TIMESTAMP of a
  // TIMESTAMP column is its stored instant, unconverted. Neither reads the session's zone.
  return dueTypes.get(t.name) === 'timestamp' ? `ROUND(UNIX_TIMESTAMP(${col}) * 1000)` : `TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${col}) DIV 1000`;
}

/** Now in epoch ms from UTC_TIMESTAMP(3): no session zone (a named one repeats an hour each autumn). */
const NOW_MS = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000";

/** `<due> <= now`, the database clock in the due column's terms. */
function duePassed(t: Transition, dueTypes: ReadonlyMap<string, string>): string {
  if (t.due.kind === 'datetime' && dueTypes.get(t.name) !== 'timestamp') return `${due(t)} <= UTC_TIMESTAMP(3)`;
  return `${dueMs(t, dueTypes)} <= ${NOW_MS}`;
}

/** Printed once before the views: the session's character set for the script's text. */
export const EFFECTIVE_VIEW_PREAMBLE = 'SET NAMES utf8mb4;';

/** A status value as SQL text: an integer's digits, or a string's UTF-8 bytes as a hex literal (see the header). */
function literal(v: StatusValue): string {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new RangeError(`status value ${v} is not an integer`);
    return String(v);
  }
  return `_utf8mb4 X'${Buffer.from(v, 'utf8').toString('hex').toUpperCase()}'`;
}
