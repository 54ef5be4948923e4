/**
 * Whether a due column's values, as a sample of them shows, can be the due times of its kind.
 *
 * The types alone cannot tell epoch seconds from epoch milliseconds: both are a BIGINT. Read in
 * the wrong unit, seconds are instants of January 1970 (every row due at once: the stream and
 * the scanner would transition the whole table on their first look) and milliseconds instants
 * tens of thousands of years ahead (no row ever due). So `check` and start-up read a bounded
 * sample of each due column (db/sql/read-due-sample.ts) and refuse a column NONE of whose sampled
 * values is a plausible due time in its declared kind, naming the kind that fits.
 *
 * Plausible: within PAST_YEARS before and FUTURE_YEARS after the database clock. Wide on
 * purpose (a row overdue for decades, a coupon good for a century both pass): only a sample
 * that no value of saves is refused, and what a wrong unit produces is far outside it
 * (seconds read as ms land in 1970–1973 for any date before the year 5000; ms read as seconds
 * past the year 50,000).
 *
 * Pure: the sample and the clock come in as data.
 */
import type { DueKind, StatusValue } from './entity-catalogue';

const YEAR_MS = 365.25 * 86_400_000;
export const PAST_YEARS = 30;
export const FUTURE_YEARS = 300;
/** JavaScript's Date range: beyond it an instant has no ISO text. */
const DATE_LIMIT_MS = 8.64e15;

type Unit = 'epoch_s' | 'epoch_ms' | 'epoch_us';
const MS_PER: Readonly<Record<Unit, number>> = { epoch_s: 1000, epoch_ms: 1, epoch_us: 0.001 };

export type DueSample = Readonly<{
  /** `<entity>.<transition> (<schema>.<table>)`: where the problem is. */
  at: string;
  column: string;
  kind: DueKind;
  /** The from-states the sample's rows are in. */
  from: readonly StatusValue[];
  /** The due column's values as the driver returned them (Date for datetime; number or decimal string for an epoch kind); NULLs left out. */
  values: readonly unknown[];
}>;

/** The problem line when no sampled value is plausible for the declared kind; null when one is (or there is no sample). */
export function duePlausibilityProblem(sample: DueSample, nowMs: number): string | null {
  const { at, column, kind, from, values } = sample;
  if (values.length === 0) return null;
  const window = { from: nowMs - PAST_YEARS * YEAR_MS, to: nowMs + FUTURE_YEARS * YEAR_MS };
  const plausible = (ms: number) => Number.isFinite(ms) && ms >= window.from && ms <= window.to;
  const raws = values.map((v) => rawOf(kind, v));
  const declared = raws.map((r) => (kind === 'datetime' ? r : r * MS_PER[kind]));
  if (declared.some(plausible)) return null;
  const states = from.map((v) => JSON.stringify(v)).join(', ');
  const what = `due column ${column} is declared ${kind}, but none of the ${values.length} values sampled from rows in ${states} is a plausible due time as ${kind}`;
  const consequence = declared.every((ms) => ms < window.from)
    ? 'every such row would be due at once'
    : declared.every((ms) => ms > window.to)
      ? 'no such row would ever be due'
      : `none falls between ${yearOf(window.from)} and ${yearOf(window.to)}`;
  const median = medianOf(raws);
  if (kind === 'datetime') {
    return `${at}: ${what}: ${consequence} (median ${instantText(median)}); check that ${column} is this transition's due column (a placeholder such as 1970-01-01 or 9999-12-31 is no due time: use NULL for none)`;
  }
  // The unit most of the sample is plausible in, if any: what the column really holds.
  const units = (['epoch_s', 'epoch_ms', 'epoch_us'] as const).filter((u) => u !== kind);
  const fits = units.map((u) => ({ u, n: raws.filter((r) => plausible(r * MS_PER[u])).length })).sort((a, b) => b.n - a.n)[0]!;
  const fitting = fits.n * 2 >= raws.length ? fits.u : undefined;
  const readings = (['epoch_ms', 'epoch_s', ...(fitting === 'epoch_us' ? ['epoch_us' as const] : [])] as const)
    .map((u) => `as ${u} ${instantText(median * MS_PER[u])}`)
    .join(', ');
  const fix =
    fitting === undefined
      ? `check that ${column} is this transition's due column and holds epoch ms or s (0 or a placeholder is no due time: use NULL for none)`
      : fitting === 'epoch_us'
        ? `the values look like epoch microseconds, which no due kind reads: store epoch ms (epoch_ms) or seconds (epoch_s) in ${column}`
        : `declare it ${fitting}`;
  return `${at}: ${what}: ${consequence} (median ${median}: ${readings}); ${fix}`;
}

/** Epoch ms for datetime (NaN for a zero date); the integer as stored for an epoch kind (NaN if none). */
function rawOf(kind: DueKind, v: unknown): number {
  if (kind === 'datetime') return v instanceof Date ? v.getTime() : Number.NaN;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return typeof v === 'string' && /^-?[0-9]+$/.test(v) ? Number(v) : Number.NaN;
}

function medianOf(xs: readonly number[]): number {
  const sorted = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function instantText(ms: number): string {
  if (!Number.isFinite(ms)) return 'no valid instant';
  if (Math.abs(ms) > DATE_LIMIT_MS) return ms > 0 ? 'beyond the year 275760' : 'before the year -271821';
  return new Date(ms).toISOString();
}

function yearOf(ms: number): number {
  return new Date(ms).getUTCFullYear();
}
