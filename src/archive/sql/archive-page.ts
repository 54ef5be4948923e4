/**
 * The archive's mover, one page of one hot table (core/entity-catalogue.ts Archive): which rows
 * may move, then their move in one transaction on that table's database. Statements, for a page
 * of one final state:
 *
 *   read    SELECT CAST(`id` AS CHAR), `<since>` FROM `<hot>` FORCE INDEX (<index>)
 *            WHERE `status` = ? AND `<since>` <= ?cutoff AND (`<since>` > ? OR (`<since>` = ? AND `id` > ?))
 *            ORDER BY `status`, `<since>`, `id` LIMIT ?             (no lock: a candidate list)
 *   move    SELECT NOW(3)                                           cutoff = now − after, by the database clock
 *           SELECT `id` FROM `<hot>` FORCE INDEX (PRIMARY) WHERE `id` IN (<page>)
 *            AND `status` IN (?final) AND `<since>` <= ?cutoff ORDER BY `id` FOR UPDATE SKIP LOCKED
 *           SELECT `id` FROM `<archive>` WHERE `id` IN (<locked>) FOR UPDATE
 *           INSERT INTO `<archive>` (<columns>) SELECT <columns> FROM `<hot>` FORCE INDEX (PRIMARY) WHERE `id` IN (<to copy>)
 *           DELETE FROM `<hot>` WHERE `id` IN (<to copy>) AND `status` IN (?final) AND `<since>` <= ?cutoff
 *
 * Each row ends in exactly one of the two tables: the copy and the delete commit together or not
 * at all (a kill between them rolls both back), and the locked rows cannot change between them.
 * A row the application holds is skipped (SKIP LOCKED: the mover never makes it wait), one that
 * left its final state or became younger since the read is not locked, and the next page or pass
 * sees it again. A row already in the archive (a copy made by hand, an earlier tool) is left in
 * the hot table and counted as a conflict: nothing is overwritten, nothing deleted unseen. The
 * delete is guarded by the same final states and age, and must delete what was copied, or the
 * page rolls back (ArchiveMismatch).
 *
 * Inputs: identifiers checked by the entities file and quoted; ids as checked literals
 * (db/id-list.ts); values bound. `columns`: the hot table's columns the archive takes (all of
 * them but those the archive generates itself), as the schema check read them.
 */
import type { Knex } from 'knex';
import type { TableInfo } from '../../core/column-info';
import type { Archive, Entity, Location, StatusValue } from '../../core/entity-catalogue';
import { dueMsOf, dueValueOf } from '../../db/due-value';
import { idList } from '../../db/id-list';
import { quoteId } from '../../db/quote-id';
import { readDbNow } from '../../db/sql/read-db-now';

/** Where a pass stands in one final state's rows: the last (since, id) read. */
export type ArchiveCursor = Readonly<{ sinceMs: number; id: string }>;

export type ArchiveCandidates = Readonly<{ ids: readonly string[]; next: ArchiveCursor | null }>;

export type PageMoved = Readonly<{ moved: number; conflicts: readonly string[]; skipped: number }>;

/** The delete did not remove what the copy wrote: the page is rolled back, nothing moved. */
export class ArchiveMismatch extends Error {
  override readonly name = 'ArchiveMismatch';
}

export type ArchivePage = Readonly<{
  /** Up to `limit` ids in `state` old enough by `nowMs`, after `after` in (since, id) order. */
  candidates: (db: Knex, state: StatusValue, nowMs: number, after: ArchiveCursor | null, limit: number) => Promise<ArchiveCandidates>;
  /** Moves those of `ids` still final and old enough by the database clock, in one transaction. */
  move: (db: Knex, ids: readonly string[]) => Promise<PageMoved>;
}>;

/** The hot table's columns the copy writes: those the archive has and does not generate itself. */
export function archivedColumns(hot: TableInfo, archive: TableInfo): string[] {
  return [...hot.columns.values()]
    .filter((c) => c.generated !== true && archive.columns.has(c.name) && archive.columns.get(c.name)!.generated !== true)
    .map((c) => c.name);
}

export function archivePage(entity: Entity, archive: Archive, hot: Location, target: Location, columns: readonly string[]): ArchivePage {
  const id = quoteId(entity.idColumn);
  const status = quoteId(entity.status.column);
  const since = quoteId(archive.since.column);
  const hotTable = quoteId(hot.table);
  const archiveTable = quoteId(target.table);
  const kind = archive.since.kind;
  const columnList = columns.map(quoteId).join(', ');
  const cutoffAt = (nowMs: number) => dueValueOf(kind, nowMs - archive.afterMs);
  const guard = `${status} IN (?) AND ${since} <= ?`;
  return {
    candidates: async (db, state, nowMs, after, limit) => {
      // After the cursor in (since, id) order: the index's own order within one status.
      const cursor = after === null ? '' : ` AND (${since} > ? OR (${since} = ? AND ${id} > ${idList([after.id])}))`;
      const at = after === null ? undefined : dueValueOf(kind, after.sinceMs);
      const cursorBindings = at === undefined ? [] : [at, at];
      const [rows] = (await db.raw(
        `SELECT CAST(${id} AS CHAR) AS id, ${since} AS since FROM ${hotTable} FORCE INDEX (${quoteId(archive.index)})
          WHERE ${status} = ? AND ${since} <= ?${cursor} ORDER BY ${status}, ${since}, ${id} LIMIT ?`,
        [state, cutoffAt(nowMs), ...cursorBindings, limit] as Knex.RawBinding[],
      )) as [Array<{ id: string; since: unknown }>];
      const last = rows.at(-1);
      return {
        ids: rows.map((r) => r.id),
        next: last === undefined ? after : { sinceMs: dueMsOf(kind, last.since, `${hot.key}.${archive.since.column}`), id: last.id },
      };
    },
    move: async (db, ids) => {
      if (ids.length === 0) return { moved: 0, conflicts: [], skipped: 0 };
      return db.transaction(async (trx) => {
        const cutoff = cutoffAt(await readDbNow(trx));
        const final = [...archive.finalStates];
        const [locked] = (await trx.raw(
          `SELECT CAST(${id} AS CHAR) AS id FROM ${hotTable} FORCE INDEX (PRIMARY) WHERE ${id} IN (${idList(ids)}) AND ${guard} ORDER BY ${id} FOR UPDATE SKIP LOCKED`,
          [final, cutoff] as Knex.RawBinding[],
        )) as [Array<{ id: string }>];
        if (locked.length === 0) return { moved: 0, conflicts: [], skipped: ids.length };
        const lockedIds = locked.map((r) => r.id);
        const [present] = (await trx.raw(`SELECT CAST(${id} AS CHAR) AS id FROM ${archiveTable} WHERE ${id} IN (${idList(lockedIds)}) FOR UPDATE`)) as [
          Array<{ id: string }>,
        ];
        const conflicts = new Set(present.map((r) => r.id));
        const toCopy = lockedIds.filter((i) => !conflicts.has(i));
        if (toCopy.length > 0) {
          const list = idList(toCopy);
          await trx.raw(`INSERT INTO ${archiveTable} (${columnList}) SELECT ${columnList} FROM ${hotTable} FORCE INDEX (PRIMARY) WHERE ${id} IN (${list})`);
          const [deleted] = (await trx.raw(`DELETE FROM ${hotTable} WHERE ${id} IN (${list}) AND ${guard}`, [final, cutoff] as Knex.RawBinding[])) as [
            { affectedRows: number },
          ];
          if (deleted.affectedRows !== toCopy.length)
            throw new ArchiveMismatch(
              `${hot.key}: copied ${toCopy.length} rows to ${target.table} but deleted ${deleted.affectedRows}; the page is rolled back`,
            );
        }
        return { moved: toCopy.length, conflicts: [...conflicts], skipped: ids.length - lockedIds.length };
      });
    },
  };
}
