/**
 * The archive's mover as the tests drive it (src/archive/sql/archive-page.ts): its page on an
 * entity's first hot table, columns as the server reports them, and a whole pass of it over
 * every final state, page after page, until the candidates run out.
 */
import type { Knex } from 'knex';
import { archivedColumns, archivePage, type ArchiveCursor, type ArchivePage } from '../../src/archive/sql/archive-page';
import type { Entity } from '../../src/core/entity-catalogue';
import { readDbNow } from '../../src/db/sql/read-db-now';
import { readTableSchema } from '../../src/db/sql/read-table-schema';

export async function firstTablePage(db: Knex, entity: Entity): Promise<ArchivePage> {
  const archive = entity.archive!;
  const { hot, archive: target } = archive.tables[0]!;
  const tables = await readTableSchema(db, [hot.table, target.table]);
  return archivePage(entity, archive, hot, target, archivedColumns(tables.get(hot.table)!, tables.get(target.table)!));
}

export type PassTotals = { moved: number; conflicts: string[]; skipped: number; pages: number };

/** One pass: every final state's candidates, `limit` at a time, each page moved; what it did. */
export async function archivePass(db: Knex, entity: Entity, page: ArchivePage, limit: number): Promise<PassTotals> {
  const total: PassTotals = { moved: 0, conflicts: [], skipped: 0, pages: 0 };
  for (const state of entity.archive!.finalStates) {
    let cursor: ArchiveCursor | null = null;
    for (;;) {
      const { ids, next } = await page.candidates(db, state, await readDbNow(db), cursor, limit);
      if (ids.length === 0) break;
      const r = await page.move(db, ids);
      total.moved += r.moved;
      total.conflicts.push(...r.conflicts);
      total.skipped += r.skipped;
      total.pages += 1;
      cursor = next;
    }
  }
  return total;
}
