/**
 * `timebucket migrate`: an entity's archive table (core/entity-catalogue.ts Archive), created
 * when it does not exist, as core/archive-schema-check.ts wants it, never altered when it does
 * (a table the team made is theirs; `check` names what does not fit).
 *
 *   CREATE TABLE <tmp> LIKE <hot>                 every column as it is, the keys and indexes
 *                                                 (history reads use them), partitioning; no
 *                                                 foreign key, no trigger (neither server copies them)
 *   ALTER TABLE <tmp> MODIFY <id> <type> NOT NULL the id without AUTO_INCREMENT: the archive takes
 *                                                 the hot table's ids, never makes its own
 *   RENAME TABLE <tmp> TO <archive>               the archive appears whole or not at all; a second
 *                                                 migrate that got there first wins (ER_TABLE_EXISTS)
 *
 * Inputs: plain identifiers, checked by the entities file (entity-file-schema.ts IDENTIFIER) and
 * quoted; the id's type as information_schema prints it. A migrate killed between the steps
 * leaves a `tbtmp_…` table and no archive: the next one makes a new one (drop the old by hand).
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

const ER_TABLE_EXISTS = 1050;

/** True when it created `archive`, false when the table was already there. */
export async function createArchiveTable(db: Knex, hot: string, archive: string, idColumn: string): Promise<boolean> {
  if (await tableExists(db, archive)) return false;
  const tmp = `tbtmp_${randomBytes(6).toString('hex')}`;
  try {
    await db.raw('CREATE TABLE ?? LIKE ??', [tmp, hot]);
    const [rows] = (await db.raw(
      'SELECT COLUMN_TYPE AS t FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?',
      [tmp, idColumn],
    )) as [Array<{ t: string }>];
    const type = rows[0]?.t;
    // COLUMN_TYPE is the server's own text (`bigint(20) unsigned`): only a type, never a value from outside.
    if (type === undefined || !/^[a-z]+(\(\d+\))?( unsigned)?( zerofill)?$/i.test(type))
      throw new RangeError(`${hot}.${idColumn}: unexpected id type ${String(type)}`);
    await db.raw(`ALTER TABLE ?? MODIFY ?? ${type} NOT NULL`, [tmp, idColumn]);
    await db.raw('RENAME TABLE ?? TO ??', [tmp, archive]);
    return true;
  } catch (err) {
    await db.raw('DROP TABLE IF EXISTS ??', [tmp]).catch(() => undefined);
    if ((err as { errno?: number }).errno === ER_TABLE_EXISTS) return false;
    throw err;
  }
}

async function tableExists(db: Knex, table: string): Promise<boolean> {
  const [rows] = (await db.raw('SELECT 1 AS found FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?', [table])) as [unknown[]];
  return rows.length > 0;
}
