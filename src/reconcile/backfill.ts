/**
 * Backfill: schedules the rows that already exist. A new repartitioner group starts at the end
 * of the CDC topics (config TB_CDC_START_FROM), and CDC topics keep changes for a limited time,
 * so the rows a deployment finds in the database have no entry in the rings. Backfill reads them
 * (keyset pages of each transition's index range) and routes each through the same router as
 * the repartitioner: a row not yet due lands in its ring bucket and fires on time; an overdue
 * one goes to the due lane at once (instead of waiting for the compensation scanner's grace
 * period).
 *
 * Transitions in turn (file order), each with its own progress. A transition with several
 * from-values reads each value's index range separately (one range each keeps the read in index
 * order) and merges them by (due, id): a row is routed only once every range still open has
 * been read up to it, so when a run stops, every row of the transition due before the last one
 * routed has been routed, and `--since <that time>` resumes it without a gap (I3).
 *
 * A spread entity (a table set, several databases) reads each table's ranges the same way and
 * merges them all: ids are unique across an entity's tables, so (due, id) still orders them.
 *
 * A transition with reminders gets the fire points still ahead of each row as well, as the
 * repartitioner would have scheduled them from the row's change (core/bucket-entry.ts
 * reminderEntries): "when the row appeared" is the time of the read, so a fire point already
 * past is skipped, never sent late. They are routed after the page's transition entries.
 *
 * Idempotent: an entry is a reminder, and the expirer's guarded update decides (I2), so running
 * it twice, or over rows the stream already scheduled, adds only no-op lookups. Run it after the
 * repartitioner group has joined: every change after that is the stream's, every row before it
 * is read here, so nothing falls between the two.
 *
 * Pure orchestration: the page read and the routing are injected (tests use fakes).
 */
import { reminderEntries, type BucketEntry, type SkipCounter } from '../core/bucket-entry';
import { entityOf, isSpread, type EntityCatalogue, type Location, type StatusValue, type Transition } from '../core/entity-catalogue';
import type { ExpirableRow, KeysetCursor, TimeWindow } from './sql/read-expirable-page';

/** `routed`: rows routed (their transition entries); `reminders`: fire-point entries routed for them. */
export type BackfillProgress = Readonly<{
  entity: string;
  transition: string;
  total: number;
  read: number;
  routed: number;
  due: number;
  reminders: number;
  lastExpireAtMs?: number;
}>;

export type BackfillOptions = Readonly<{
  catalogue: EntityCatalogue;
  transitions: readonly Transition[];
  window: TimeWindow;
  pageSize: number;
  /** Rows in the window over every table of the transition's entity. */
  count: (transition: Transition, window: TimeWindow) => Promise<number>;
  readPage: (
    transition: Transition,
    location: Location,
    from: StatusValue,
    window: TimeWindow,
    cursor: KeysetCursor | null,
    limit: number,
  ) => Promise<ExpirableRow[]>;
  /** Routes and appends the entries (acknowledged); returns how many went to the due lane. */
  route: (entries: readonly BucketEntry[]) => Promise<{ due: number }>;
  /** Now, for which fire points are already past (epoch ms). */
  now: () => number;
  /** A fire point that got no entry (past, or no user to digest by). */
  onReminderSkipped?: SkipCounter;
  onStart?: (transition: Transition, total: number) => void;
  onProgress?: (progress: BackfillProgress) => void;
  /** Checked between pages: a stop request (SIGINT) ends the run after the page in flight. */
  stopRequested?: () => boolean;
}>;

export type BackfillResult = Readonly<{
  /** The transitions started, in order; the last is the interrupted one when not complete. */
  transitions: readonly BackfillProgress[];
  complete: boolean;
  /** Refs of the transitions an interrupted run never started. */
  notStarted: readonly string[];
}>;

export async function backfill(opts: BackfillOptions): Promise<BackfillResult> {
  if (!Number.isSafeInteger(opts.pageSize) || opts.pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${opts.pageSize}`);
  const done: BackfillProgress[] = [];
  for (const [i, transition] of opts.transitions.entries()) {
    const total = await opts.count(transition, opts.window);
    opts.onStart?.(transition, total);
    let progress: BackfillProgress = { entity: transition.entity, transition: transition.name, total, read: 0, routed: 0, due: 0, reminders: 0 };
    const next = mergedPages(opts, transition);
    for (;;) {
      if (opts.stopRequested?.() === true) {
        done.push(progress);
        return { transitions: done, complete: false, notStarted: opts.transitions.slice(i + 1).map((t) => t.ref) };
      }
      const rows = await next();
      if (rows.length === 0) break;
      const spread = isSpread(entityOf(opts.catalogue, transition.entity));
      const bases = rows.map((r) => ({ entity: transition.entity, transition: transition.name, id: r.id, ...(spread && { at: r.location.key }) }));
      const { due } = await opts.route(rows.map((r, j) => ({ ...bases[j]!, expireAtMs: r.expireAtMs })));
      const reminders = remindersOf(opts, transition, rows, bases);
      if (reminders.length > 0) await opts.route(reminders);
      const last = rows[rows.length - 1]!;
      progress = {
        ...progress,
        // Rows written during the run can push `read` past the count taken at the start.
        total: Math.max(total, progress.read + rows.length),
        read: progress.read + rows.length,
        routed: progress.routed + rows.length,
        due: progress.due + due,
        reminders: progress.reminders + reminders.length,
        lastExpireAtMs: last.expireAtMs,
      };
      opts.onProgress?.(progress);
      if (rows.length < opts.pageSize) break;
    }
    done.push(progress);
  }
  return { transitions: done, complete: true, notStarted: [] };
}

/** The fire points still ahead of each row (none for a transition without reminders). */
function remindersOf(
  opts: BackfillOptions,
  t: Transition,
  rows: readonly ExpirableRow[],
  bases: ReadonlyArray<Parameters<typeof reminderEntries>[1]>,
): BucketEntry[] {
  if (t.reminders === null) return [];
  const nowMs = opts.now();
  const userColumn = t.reminders.digest?.userColumn;
  return rows.flatMap((r, j) =>
    reminderEntries(t, bases[j]!, r.expireAtMs, userColumn === undefined ? {} : { [userColumn]: r.user ?? null }, nowMs, opts.onReminderSkipped),
  );
}

type Range = { from: StatusValue; location: Location; cursor: KeysetCursor | null; buffer: ExpirableRow[]; exhausted: boolean };
type LocatedRow = ExpirableRow & Readonly<{ location: Location }>;

/**
 * Up to pageSize rows at a time of the transition's from-value ranges, merged in (due, id)
 * order; [] when every range is read. A range is read (a page) only when its next row is
 * needed, so one from-value costs exactly the reads a single keyset walk would.
 */
function mergedPages(opts: BackfillOptions, transition: Transition): () => Promise<LocatedRow[]> {
  const locations = entityOf(opts.catalogue, transition.entity).locations;
  const ranges: Range[] = locations.flatMap((location) => transition.from.map((from) => ({ from, location, cursor: null, buffer: [], exhausted: false })));
  return async () => {
    const page: LocatedRow[] = [];
    while (page.length < opts.pageSize) {
      for (const r of ranges) {
        if (r.buffer.length > 0 || r.exhausted) continue;
        const rows = await opts.readPage(transition, r.location, r.from, opts.window, r.cursor, opts.pageSize);
        r.buffer = rows;
        r.exhausted = rows.length < opts.pageSize;
        if (rows.length > 0) r.cursor = rows[rows.length - 1]!;
      }
      let head: Range | undefined;
      for (const r of ranges) if (r.buffer.length > 0 && (head === undefined || before(r.buffer[0]!, head.buffer[0]!))) head = r;
      if (head === undefined) break;
      page.push({ ...head.buffer.shift()!, location: head.location });
    }
    return page;
  };
}

/** The index's order: due time, then id as the exact integer it is (ids pass 2^53). */
function before(a: ExpirableRow, b: ExpirableRow): boolean {
  return a.expireAtMs < b.expireAtMs || (a.expireAtMs === b.expireAtMs && BigInt(a.id) < BigInt(b.id));
}
