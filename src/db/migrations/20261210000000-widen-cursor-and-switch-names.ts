/**
 * Entities as data: the scanner's cursors and the operator's switches are named after the
 * entities file, no longer after coupon and order alone.
 *
 * - scanner_cursors.entity: VARCHAR(16) → VARCHAR(97). A cursor is keyed by the entity name for
 *   an entity's first transition (today's rows keep their key), by `<entity>.<transition>` for
 *   the others, with `#<i>` for a transition's i-th from-value (reconcile/sql/claim-scan-page.ts):
 *   names are at most 16 characters each (core/entity-file.ts), so keys at most 16 + 1 + 16 + 1 + 2
 *   = 36, with room.
 * - control_switches.what: VARCHAR(16) → VARCHAR(32) (an entity name, or `scanner`), and the
 *   CHECK that limited it to coupon, order and scanner is dropped: the names are the file's,
 *   checked by `timebucket ctl` against it, and a row of an entity since removed is ignored.
 *
 * Both widen a column; no row changes (a VARCHAR widened across 255 bytes in utf8mb4 copies the
 * table, which is small: a row per cursor, per switch). Idempotent: the CHECK is dropped only if present
 * (information_schema.TABLE_CONSTRAINTS lists CHECKs on MySQL 8.0.16+ and MariaDB 10.2.22+;
 * DROP CONSTRAINT is MySQL 8.0.19+ and MariaDB 10.2+).
 */
import type { Knex } from 'knex';

const CHECK = 'chk_control_switches_what';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE scanner_cursors MODIFY entity VARCHAR(97) NOT NULL');
  if (await hasCheck(knex)) await knex.raw(`ALTER TABLE control_switches DROP CONSTRAINT ${CHECK}`);
  await knex.raw('ALTER TABLE control_switches MODIFY what VARCHAR(32) NOT NULL');
}

/** Fails while a longer name or another switch's row exists: remove those first. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE control_switches MODIFY what VARCHAR(16) NOT NULL');
  if (!(await hasCheck(knex))) await knex.raw(`ALTER TABLE control_switches ADD CONSTRAINT ${CHECK} CHECK (what IN ('coupon','order','scanner'))`);
  await knex.raw('ALTER TABLE scanner_cursors MODIFY entity VARCHAR(16) NOT NULL');
}

async function hasCheck(knex: Knex): Promise<boolean> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.TABLE_CONSTRAINTS
      WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = 'control_switches' AND CONSTRAINT_NAME = ? AND CONSTRAINT_TYPE = 'CHECK'`,
    [CHECK],
  )) as [unknown[]];
  return rows.length > 0;
}
