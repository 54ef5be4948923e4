/**
 * The polling relay's tables go: `outbox` (JSON events the relay encoded and sent) and
 * `outbox_poison` (rows it could not encode). Events are written encoded into event_outbox and
 * published by the outbox connector alone.
 *
 * Refused while either holds an event that was never published (an `outbox` row with no
 * published_at, any `outbox_poison` row): dropping them would lose those events. The previous
 * version publishes them (TB_PUBLISH_MODE=relay until timebucket_outbox_backlog_rows and
 * timebucket_outbox_poison_rows are 0); then migrate again. Published rows are history only.
 * Down recreates both tables empty.
 */
import type { Knex } from 'knex';
import { TimebucketError } from '../../core/errors';
import * as createOutbox from './20261130000100-create-outbox';
import * as createOutboxPoison from './20261203000000-create-outbox-poison';

export async function up(knex: Knex): Promise<void> {
  const waiting: string[] = [];
  if (await knex.schema.hasTable('outbox')) {
    const [[row]] = (await knex.raw('SELECT COUNT(*) AS n FROM outbox WHERE published_at IS NULL')) as [[{ n: number | string }]];
    if (Number(row.n) > 0) waiting.push(`outbox holds ${row.n} unpublished events`);
  }
  if (await knex.schema.hasTable('outbox_poison')) {
    const [[row]] = (await knex.raw('SELECT COUNT(*) AS n FROM outbox_poison')) as [[{ n: number | string }]];
    if (Number(row.n) > 0) waiting.push(`outbox_poison holds ${row.n} events set aside`);
  }
  if (waiting.length > 0) {
    throw new TimebucketError(
      'MIGRATION_REFUSED',
      `the polling relay's tables cannot be dropped: ${waiting.join('; ')}. Publish them with the previous version (TB_PUBLISH_MODE=relay; redrive outbox_poison once fixed) until none is left, then run migrate again`,
      { details: { waiting } },
    );
  }
  await knex.schema.dropTableIfExists('outbox_poison');
  await knex.schema.dropTableIfExists('outbox');
}

export async function down(knex: Knex): Promise<void> {
  await createOutbox.up(knex);
  await createOutboxPoison.up(knex);
}
