/**
 * The outbox backlog for metrics, read on every /metrics scrape of every process. Inputs: the
 * count cap. Output: unpublished rows (counted up to the cap), the age of the oldest by the
 * database clock, and rows waiting in outbox_poison (counted up to the cap).
 *
 * Bounded: it reads at most `cap` entries of idx_outbox_unpublished's NULL range (an index-only
 * read, no row lookups) and one row for the age, so a scrape costs the same with a backlog of a
 * thousand rows or ten million. A count equal to the cap means "at least the cap"; how far
 * behind the relays are beyond that is told by the age and by the rate of published rows. The
 * oldest row is the first of the range in id order (ORDER BY id: ORDER BY published_at, id
 * would make MariaDB sort the whole range, see claim-outbox-batch.ts); ids grow with insertion,
 * so it is the row waiting longest. Poison rows are not in the outbox (set-aside-poison.ts).
 * Safe to re-run: a read.
 */
import type { Knex } from 'knex';

/** Entries a scrape may read per count: a few milliseconds of index walk. */
export const BACKLOG_COUNT_CAP = 10_000;

export type OutboxBacklog = Readonly<{ rows: number; oldestAgeSeconds: number; poisonRows: number }>;

export async function readOutboxBacklog(db: Knex, cap: number = BACKLOG_COUNT_CAP): Promise<OutboxBacklog> {
  const [[row]] = (await db.raw(
    `SELECT
       (SELECT COUNT(*) FROM (SELECT 1 FROM outbox FORCE INDEX (idx_outbox_unpublished) WHERE published_at IS NULL LIMIT ?) AS head) AS n,
       (SELECT TIMESTAMPDIFF(MICROSECOND, created_at, NOW(3)) FROM outbox FORCE INDEX (idx_outbox_unpublished)
         WHERE published_at IS NULL ORDER BY id LIMIT 1) AS age_us,
       (SELECT COUNT(*) FROM (SELECT 1 FROM outbox_poison LIMIT ?) AS aside) AS poison`,
    [cap, cap],
  )) as [[{ n: number | string; age_us: number | string | null; poison: number | string }]];
  return { rows: Number(row.n), oldestAgeSeconds: Math.max(0, Number(row.age_us ?? 0)) / 1e6, poisonRows: Number(row.poison) };
}

/**
 * Every database's outbox together (each database an entity lives on has its own): rows and
 * poison rows summed, the oldest age the largest. A database that cannot be read is left out of
 * the figures (its breaker and its errors say it is down); when none can be, the first error.
 */
export async function readOutboxBacklogs(pools: Readonly<Record<string, Knex>>, cap: number = BACKLOG_COUNT_CAP): Promise<OutboxBacklog> {
  const results = await Promise.allSettled(Object.values(pools).map((db) => readOutboxBacklog(db, cap)));
  const read = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (read.length === 0) throw (results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!).reason;
  return {
    rows: read.reduce((n, b) => n + b.rows, 0),
    oldestAgeSeconds: Math.max(...read.map((b) => b.oldestAgeSeconds)),
    poisonRows: read.reduce((n, b) => n + b.poisonRows, 0),
  };
}
