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
 */
import type { Entity, Location, StatusValue, Transition } from '../core/entity-catalogue';
import { quoteId } from './quote-id';

/** `dueTypes`: information_schema DATA_TYPE of each transition's due column, by transition name. */
export function effectiveViewSql(entity: Entity, location: Location, dueTypes: ReadonlyMap<string, string>): string {
  const status = `t.${quoteId(entity.status.column)}`;
  const dueNow = (t: Transition): string => {
    const col = due(t);
    return `${status} IN (${t.from.map(literal).join(', ')}) AND ${col} IS NOT NULL AND ${duePassed(t, dueTypes)}`;
  };
  const cases = entity.transitions.map((t, i) => {
    // Another transition due earlier (or as early and first in the file) wins.
    const others = entity.transitions.flatMap((o, j) => (j === i ? [] : [`NOT (${dueNow(o)} AND ${dueMs(o, dueTypes)} ${j < i ? '<=' : '<'} ${dueMs(t, dueTypes)})`]));
    return `    WHEN ${[dueNow(t), ...others].join(' AND ')} THEN ${literal(t.to)}`;
  });
  return [
    `-- ${entity.name} on ${location.key}: the status a reader should see, exact whatever the stream's lag`,
    `CREATE OR REPLACE VIEW ${quoteId(`${location.table}_effective`)} AS`,
    'SELECT t.*,',
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

/** A status value as SQL text: an integer, or a string with quotes and backslashes escaped. */
function literal(v: StatusValue): string {
  if (typeof v === 'number') return String(v);
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
