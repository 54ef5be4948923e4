/**
 * The first pass over a table must not transition most of it at once unless asked to.
 *
 * A new deployment (or a newly mapped table or transition) meets every row already in a
 * from-state; those already due go on the scanner's first pass, all of them within minutes.
 * When that is most of the rows with a due time, the likely cause is a mapping mistake (the
 * wrong column, a wrong unit the sample check did not catch, a status mapped the wrong way
 * round), and transitions cannot be taken back. So `check` refuses it, naming the counts and
 * the flag that allows it when the backlog is meant to go, and every process that transitions
 * holds that transition at that table (db/first-pass-holds.ts): none of its rows moves, from
 * any path, while every other transition and role runs.
 *
 * Only a first pass: a cursor the scanner has completed a pass of before is not guarded, so a
 * restart after an outage (its rows all overdue) catches up without a flag. Small tables are
 * not guarded either (fewer than `minDueRows` due): a first pass that small is quickly looked at.
 *
 * The counts are bounded (db/sql/count-first-pass.ts): due rows up to a cap, then rows not yet due
 * only up to the number that would bring the share within the limit (`notDueBound`), so the
 * decision below is exact whenever the due count is under the cap.
 *
 * Pure: the counts and the limits come in as data.
 */

export type FirstPassLimits = Readonly<{
  /** Refuse when more than this share of the rows with a due time is due (TB_FIRST_PASS_MAX_DUE_SHARE). */
  maxDueShare: number;
  /** ...and at least this many are (TB_FIRST_PASS_MIN_DUE_ROWS). */
  minDueRows: number;
  /** TB_ALLOW_LARGE_FIRST_PASS: the operator has said the backlog is meant to go. */
  allowLarge: boolean;
}>;

/** The schema's defaults (config-schema.ts), also for callers without a config (tests). */
export const DEFAULT_FIRST_PASS: FirstPassLimits = Object.freeze({ maxDueShare: 0.5, minDueRows: 10_000, allowLarge: false });

/**
 * The limits a process checks at start: every process that transitions (the expirer, the
 * scanner) is guarded, since either moves a table's due rows once their entries or pages reach
 * it; the others move no row and read no counts. An expirer the autoscaler starts in a hot minute
 * is guarded too, but a deployment whose scanner has completed a pass of each cursor is past its
 * first pass, and a first pass held is not a crash loop: the other entities go on.
 */
export function firstPassLimitsFor(roles: readonly string[], limits: FirstPassLimits): FirstPassLimits {
  return roles.includes('expirer') || roles.includes('scanner') ? limits : { ...limits, allowLarge: true };
}

/** The due count stops here: a COUNT over at most this many index entries. */
export function dueCountCap(limits: FirstPassLimits): number {
  return Math.max(100_000, limits.minDueRows);
}

/**
 * The fewest rows not yet due that make `due` due rows a share within the limit: counting stops
 * there. Settled against firstPassProblem's own comparison, so float rounding cannot split them.
 */
export function notDueBound(due: number, maxDueShare: number): number {
  const within = (n: number) => due <= maxDueShare * (due + n);
  let n = Math.max(0, Math.ceil((due * (1 - maxDueShare)) / maxDueShare));
  while (!within(n)) n += 1;
  while (n > 0 && within(n - 1)) n -= 1;
  return n;
}

export type FirstPassCounts = Readonly<{
  /** `<entity>.<transition> (<schema>.<table>)`. */
  at: string;
  /** The from-states counted, as the file writes them. */
  states: string;
  due: number;
  /** Whether `due` stopped at the cap (there are at least that many). */
  dueCapped: boolean;
  /** Rows in those states not yet due, counted up to notDueBound(due). */
  notDue: number;
}>;

/** The problem line when the first pass would transition too large a share; null when not (or allowed). */
export function firstPassProblem(c: FirstPassCounts, limits: FirstPassLimits): string | null {
  if (limits.allowLarge || c.due < limits.minDueRows) return null;
  const total = c.due + c.notDue;
  if (c.due <= limits.maxDueShare * total) return null;
  const atLeast = c.dueCapped ? 'at least ' : '';
  const percent = Math.floor((c.due / total) * 100);
  return (
    `${c.at}: the first pass would transition ${atLeast}${c.due} of the ${atLeast}${total} rows in ${c.states} at once (${atLeast}${percent}% are due by the database clock; ` +
    `the limit is TB_FIRST_PASS_MAX_DUE_SHARE=${limits.maxDueShare} of tables with TB_FIRST_PASS_MIN_DUE_ROWS=${limits.minDueRows} due or more); ` +
    `if the due column and its kind are right and this backlog is meant to go now, start with TB_ALLOW_LARGE_FIRST_PASS=true`
  );
}
