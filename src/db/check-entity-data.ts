/**
 * The entities file against the DATA of one database, once its tables match the file
 * (check-entity-schema.ts): what the types cannot tell.
 *   - each due column's sample is plausible for its declared kind (core/due-plausibility.ts):
 *     epoch seconds declared as milliseconds read as January 1970, and every row would
 *     transition at once;
 *   - an integer status whose declared codes no row holds (core/status-codes-check.ts);
 *   - the first pass would not transition most of a table at once unless allowed
 *     (core/first-pass-guard.ts). Apart from the others: `run` holds that transition at that
 *     table (db/first-pass-holds.ts) where every other problem stops it; `check` names them all.
 * Every statement is bounded (a LIMIT over an index) and goes through the database's own pool,
 * so a database is checked on its own: at start for those that answer, later for one that
 * did not (db/database-watch.ts), and by `timebucket check` one at a time.
 */
import { readDbNow } from './sql/read-db-now';
import type { Knex } from 'knex';
import { qualified, type Entity, type EntityCatalogue, type Location, type StatusValue, type Transition } from '../core/entity-catalogue';
import { duePlausibilityProblem } from '../core/due-plausibility';
import { firstPassProblem, type FirstPassLimits } from '../core/first-pass-guard';
import { statusCodesProblem } from '../core/status-codes-check';
import { scanCursorsOf } from '../core/scan-cursors';
import { countFirstPass } from './sql/count-first-pass';
import { dueValueOf } from './due-value';
import { readDueSample } from './sql/read-due-sample';
import { readStatusPresence } from './sql/read-status-presence';

/** Rows read from each end of a from-state's index range: 100 values a from-state at most. */
const SAMPLE_PER_END = 50;

export type DataCheckOptions = Readonly<{
  firstPass: FirstPassLimits;
  /** Scan cursor keys that have completed a pass (db/sql/read-scanned-cursors.ts, from the main database). */
  scannedCursors: ReadonlySet<string>;
}>;

/** A transition at one table whose first pass is refused, and the line that says why. */
export type FirstPassHold = Readonly<{ transition: Transition; location: Location; problem: string }>;

/** What the data check found: the first passes refused apart from every other problem. */
export type DataFindings = Readonly<{ problems: string[]; firstPass: FirstPassHold[] }>;

/** Every problem of the tables `catalogue` maps on `database` as one list (`timebucket check`). */
export async function entityDataProblems(
  db: Knex,
  catalogue: EntityCatalogue,
  database: string,
  schemaNames: Readonly<Record<string, string>>,
  opts: DataCheckOptions,
): Promise<string[]> {
  const found = await entityDataFindings(db, catalogue, database, schemaNames, opts);
  return [...found.problems, ...found.firstPass.map((h) => h.problem)];
}

/** The findings of the tables `catalogue` maps on `database`, read through `db` (that database's pool). */
export async function entityDataFindings(
  db: Knex,
  catalogue: EntityCatalogue,
  database: string,
  schemaNames: Readonly<Record<string, string>>,
  opts: DataCheckOptions,
): Promise<DataFindings> {
  const here = catalogue.entities.flatMap((entity) => entity.locations.filter((l) => l.database === database).map((location) => ({ entity, location })));
  if (here.length === 0) return { problems: [], firstPass: [] };
  // The database clock decides due-ness (I2), as for the scanner: not this process's.
  const nowMs = await readDbNow(db);
  const cursorKeys = new Map(scanCursorsOf(catalogue).map((c) => [cursorId(c.transition, c.location, c.from), c.key]));
  const problems: string[] = [];
  const firstPass: FirstPassHold[] = [];
  for (const { entity, location } of here) {
    const where = qualified(location, schemaNames);
    const declared = entity.status.values;
    if (entity.status.type === 'integer' && declared !== null) {
      const presence = await readStatusPresence(db, entity, location, entity.transitions[0]!.index, declared);
      const problem = statusCodesProblem({ at: `${entity.name} (${where})`, column: entity.status.column, declared, ...presence });
      if (problem !== null) {
        // Codes that are not this table's make the samples below meaningless.
        problems.push(problem);
        continue;
      }
    }
    for (const t of entity.transitions) {
      const at = `${t.ref} (${where})`;
      const values: unknown[] = [];
      for (const from of t.from) values.push(...(await readDueSample(db, entity, t, location, from, SAMPLE_PER_END)));
      const implausible = duePlausibilityProblem({ at, column: t.due.column, kind: t.due.kind, from: t.from, values }, nowMs);
      if (implausible !== null) {
        // The wrong unit explains a large first pass too: one line, with the fix.
        problems.push(implausible);
        continue;
      }
      const problem = await firstPassProblemOf(db, entity, t, location, at, nowMs, opts, (from) => cursorKeys.get(cursorId(t, location, from)));
      if (problem !== null) firstPass.push({ transition: t, location, problem });
    }
  }
  return { problems, firstPass };
}

async function firstPassProblemOf(
  db: Knex,
  entity: Entity,
  t: Transition,
  location: Location,
  at: string,
  nowMs: number,
  opts: DataCheckOptions,
  keyOf: (from: StatusValue) => string | undefined,
): Promise<string | null> {
  if (opts.firstPass.allowLarge) return null;
  // Only from-states whose cursor has never completed a pass: a restart after an outage is no first pass.
  const first = t.from.filter((from) => {
    const key = keyOf(from);
    return key === undefined || !opts.scannedCursors.has(key);
  });
  if (first.length === 0) return null;
  const counts = await countFirstPass(db, entity, t, location, first, dueValueOf(t.due.kind, nowMs), opts.firstPass);
  return firstPassProblem({ at, states: first.map((v) => JSON.stringify(v)).join(', '), ...counts }, opts.firstPass);
}

function cursorId(t: Transition, location: Location, from: StatusValue): string {
  return `${t.ref}|${location.key}|${JSON.stringify(from)}`;
}
