/**
 * Counting what an integration test checks, one way everywhere: rows in a status (among given
 * ids), and a metric's samples summed.
 */
import type { Knex } from 'knex';

/** Rows of `table` whose `column` (default `status`) is `status`, among `ids` when given. */
export async function countInStatus(db: Knex, table: string, status: string, ids?: ReadonlyArray<string | number>, column = 'status'): Promise<number> {
  const query = db(table).where(column, status);
  if (ids !== undefined) void query.whereIn('id', [...ids]);
  const [row] = (await query.count({ n: '*' })) as Array<{ n: number | string }>;
  return Number(row!.n);
}

type MetricValues = { get: () => Promise<{ values: ReadonlyArray<{ value: number; labels: Readonly<Record<string, string | number | undefined>> }> }> };

/** A prom-client metric's samples summed: those carrying every label given, all when none is. */
export async function metricSum(metric: MetricValues, labels: Readonly<Record<string, string>> = {}): Promise<number> {
  const { values } = await metric.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want)).reduce((n, v) => n + v.value, 0);
}
