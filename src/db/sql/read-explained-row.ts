/**
 * What `explain` reads of one row, read-only, each a primary-key or unique-index lookup:
 *
 *   SELECT <status>, <every transition's due column> FROM <table> WHERE <id> = ?   (each table of
 *          the entity on the database, until the row is found)
 *   SELECT NOW(3)                                      (the database clock: db/sql/read-db-now.ts)
 *   SELECT event_key, topic, created_at, payload FROM event_outbox
 *          WHERE event_key LIKE '<entity>-<transition>-<id>-%' ORDER BY id LIMIT 20
 *          (a range of the unique event_key index: the transition's events of this row)
 *
 * Inputs: the entity, the id (a decimal string, exact past 2^53), the database's pool. Nothing is
 * written or locked, so it is safe to run against production at any time.
 */
import type { Knex } from 'knex';
import type { Entity, Location, StatusValue, Transition } from '../../core/entity-catalogue';
import { dueMsOf } from '../due-value';

export type ExplainedRow = Readonly<{ location: Location; status: StatusValue; dueMs: ReadonlyMap<string, number | null> }>;
export type OutboxRowOfKey = Readonly<{ eventKey: string; topic: string; createdAtMs: number; payload: Buffer }>;

/** The row in the first of `locations` that holds it, or undefined. */
export async function readExplainedRow(db: Knex, entity: Entity, locations: readonly Location[], id: string): Promise<ExplainedRow | undefined> {
  const dueColumns = [...new Set(entity.transitions.map((t) => t.due.column))];
  for (const location of locations) {
    const row = (await db(location.table)
      .select(entity.status.column, ...dueColumns)
      .where(entity.idColumn, id)
      .first()) as Record<string, unknown> | undefined;
    if (row === undefined) continue;
    const dueMs = new Map(
      entity.transitions.map((t) => {
        const raw = row[t.due.column];
        return [t.due.column, raw === null || raw === undefined ? null : dueMsOf(t.due.kind, raw, `${location.table}.${t.due.column} of ${id}`)] as const;
      }),
    );
    return { location, status: row[entity.status.column] as StatusValue, dueMs };
  }
  return undefined;
}

/** The transition's event_outbox rows of row `id`, oldest first (at most 20: a row moved that often is listed in part). */
export async function readOutboxRowsOf(db: Knex, t: Pick<Transition, 'entity' | 'name'>, id: string): Promise<OutboxRowOfKey[]> {
  // An `_` of a name matches any character here: the caller keeps the keys of this exact prefix
  // (core/explain.ts parseEventKey), which the index range already narrowed to a few.
  const prefix = `${t.entity}-${t.name}-${id}-`;
  const rows = (await db('event_outbox')
    .select('event_key', 'topic', 'created_at', 'payload')
    .where('event_key', 'like', `${prefix}%`)
    .orderBy('id')
    .limit(20)) as Array<{
    event_key: string;
    topic: string;
    created_at: Date;
    payload: Buffer;
  }>;
  return rows.map((r) => ({ eventKey: r.event_key, topic: r.topic, createdAtMs: r.created_at.getTime(), payload: r.payload }));
}
