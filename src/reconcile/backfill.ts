/**
 * Backfill: schedules the rows that already exist. A new repartitioner group starts at the end
 * of the CDC topics (config TB_CDC_START_FROM), and CDC topics keep changes for a limited time,
 * so the rows a deployment finds in the database have no entry in the rings. Backfill reads them
 * (keyset pages of the expirable index range) and routes each through the same router as the
 * repartitioner: a row not yet due lands in its ring bucket and fires on time; an overdue one
 * goes to the due lane at once (instead of waiting for the compensation scanner's grace period).
 *
 * Idempotent: an entry is a reminder, and the expirer's guarded update decides (I2), so running
 * it twice, or over rows the stream already scheduled, adds only no-op lookups. Run it after the
 * repartitioner group has joined: every change after that is the stream's, every row before it
 * is read here, so nothing falls between the two.
 *
 * Pure orchestration: the page read and the routing are injected (tests use fakes).
 */
import type { BucketEntry, EntityType } from '../core/bucket-entry';
import type { ExpirableRow, KeysetCursor, TimeWindow } from './sql/read-expirable-page';

export type BackfillProgress = Readonly<{ entity: EntityType; total: number; read: number; routed: number; due: number; lastExpireAtMs?: number }>;

export type BackfillOptions = Readonly<{
  entities: readonly EntityType[];
  window: TimeWindow;
  pageSize: number;
  count: (entity: EntityType, window: TimeWindow) => Promise<number>;
  readPage: (entity: EntityType, window: TimeWindow, cursor: KeysetCursor | null, limit: number) => Promise<ExpirableRow[]>;
  /** Routes and appends the entries (acknowledged); returns how many went to the due lane. */
  route: (entries: readonly BucketEntry[]) => Promise<{ due: number }>;
  onStart?: (entity: EntityType, total: number) => void;
  onProgress?: (progress: BackfillProgress) => void;
  /** Checked between pages: a stop request (SIGINT) ends the run after the page in flight. */
  stopRequested?: () => boolean;
}>;

export type BackfillResult = Readonly<{ entities: readonly BackfillProgress[]; complete: boolean }>;

export async function backfill(opts: BackfillOptions): Promise<BackfillResult> {
  if (!Number.isSafeInteger(opts.pageSize) || opts.pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${opts.pageSize}`);
  const done: BackfillProgress[] = [];
  for (const entity of opts.entities) {
    const total = await opts.count(entity, opts.window);
    opts.onStart?.(entity, total);
    let progress: BackfillProgress = { entity, total, read: 0, routed: 0, due: 0 };
    let cursor: KeysetCursor | null = null;
    for (;;) {
      if (opts.stopRequested?.() === true) {
        done.push(progress);
        return { entities: done, complete: false };
      }
      const rows = await opts.readPage(entity, opts.window, cursor, opts.pageSize);
      if (rows.length === 0) break;
      const { due } = await opts.route(rows.map((r) => ({ v: 1, entity, id: r.id, expireAtMs: r.expireAtMs })));
      const last = rows[rows.length - 1]!;
      cursor = { expireAt: new Date(last.expireAtMs), id: last.id };
      progress = {
        entity,
        // Rows written during the run can push `read` past the count taken at the start.
        total: Math.max(total, progress.read + rows.length),
        read: progress.read + rows.length,
        routed: progress.routed + rows.length,
        due: progress.due + due,
        lastExpireAtMs: last.expireAtMs,
      };
      opts.onProgress?.(progress);
      if (rows.length < opts.pageSize) break;
    }
    done.push(progress);
  }
  return { entities: done, complete: true };
}
