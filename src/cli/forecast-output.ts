/**
 * How `forecast` prints: a line per bucket with a bar scaled to the largest count, so a hot
 * minute stands out at a glance; or one JSON object with `--json`. Buckets with no entries are
 * left out of the table (their count is in the tier's line) unless `--all`. Times are UTC.
 */
import type { Forecast, ForecastBucket, TierForecast } from '../core/forecast';
import { formatUtc } from '../core/utc-time';

const BAR_WIDTH = 40;
const NOTE =
  'an upper bound: an entry whose row was paid or extended since it was scheduled counts until the database finds it stale; ' +
  'not split per entity: a bucket record names its entity only inside its value';

export type ForecastPrintOptions = Readonly<{ tier?: string; all?: boolean }>;

function tiersOf(forecast: Forecast, tier: string | undefined): readonly TierForecast[] {
  return tier === undefined ? forecast.tiers : forecast.tiers.filter((t) => t.tier === tier);
}

function positionLabel(b: ForecastBucket): string {
  return b.position > 0 ? `+${b.position}` : String(b.position);
}

function entries(n: number): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? 'entry' : 'entries'}`;
}

function bar(entries: number, max: number): string {
  if (entries === 0 || max === 0) return '';
  return '█'.repeat(Math.max(1, Math.round((entries / max) * BAR_WIDTH)));
}

export function forecastLines(forecast: Forecast, opts: ForecastPrintOptions = {}): string[] {
  const tiers = tiersOf(forecast, opts.tier);
  const max = Math.max(forecast.due, ...tiers.flatMap((t) => t.buckets.map((b) => b.entries)));
  const count = (n: number) => n.toLocaleString('en-US').padStart(12);
  const lines = [
    `forecast at ${formatUtc(forecast.atMs)}: entries held per bucket`,
    `  (${NOTE})`,
    `due lane: ${entries(forecast.due)} due now ${bar(forecast.due, max)}`.trimEnd(),
  ];
  for (const t of tiers) {
    const total = t.buckets.reduce((n, b) => n + b.entries, 0);
    const held = t.buckets.filter((b) => b.entries > 0).length;
    lines.push(`${t.tier}: ${entries(total)} in ${held} of ${t.buckets.length} buckets`);
    for (const b of t.buckets) {
      if (b.entries === 0 && opts.all !== true) continue;
      const state = b.state === 'released' ? 'released' : 'ahead   ';
      const later = b.parksLater ? ' (and every entry beyond the horizon: later)' : '';
      lines.push(`  ${positionLabel(b).padStart(5)}  ${formatUtc(b.bucketStartMs).padEnd(29)} ${state}${count(b.entries)} ${bar(b.entries, max)}${later}`);
    }
  }
  return lines;
}

export function forecastJson(forecast: Forecast, opts: ForecastPrintOptions = {}) {
  return {
    at: formatUtc(forecast.atMs),
    note: NOTE,
    due: forecast.due,
    tiers: tiersOf(forecast, opts.tier).map((t) => ({
      tier: t.tier,
      widthMs: t.widthMs,
      buckets: t.buckets
        .filter((b) => b.entries > 0 || opts.all === true)
        .map((b) => ({
          position: b.position,
          start: formatUtc(b.bucketStartMs),
          releaseAt: formatUtc(b.releaseAtMs),
          topic: b.topic,
          state: b.state,
          entries: b.entries,
          parksLater: b.parksLater,
        })),
    })),
  };
}
