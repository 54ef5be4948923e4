/** Nearest-rank percentiles of a distribution that fits in memory (a million delays does). */

/** p in (0, 100] of an ascending array; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** min: the earliest; a negative delay would be a row transitioned before its due time. */
export type DelaySummary = Readonly<{ min: number; p50: number; p95: number; p99: number; max: number }>;

/** Sorts in place (a Float64Array sorts numerically, and needs an eighth of an array's memory). */
export function summarize(values: Float64Array): DelaySummary | null {
  if (values.length === 0) return null;
  values.sort();
  return { min: values[0]!, p50: percentile(values, 50), p95: percentile(values, 95), p99: percentile(values, 99), max: values[values.length - 1]! };
}
