/**
 * Retention held by the published watermark: a pass deletes only rows older than both the
 * retention and the instant the outbox connector's committed offset stands at, and nothing while
 * that is not known. The database is a fake on a fixed clock: it answers purgeCutoff's query
 * (NOW(3) − the age asked), and a page read of event_outbox with three rows, all older than the
 * cutoff it was given.
 */
import type { Knex } from 'knex';
import { createLogger } from '../../../src/ops/logger';
import { OutboxRetention } from '../../../src/publish/outbox-retention';
import type { PublishedWatermark } from '../../../src/publish/connector-watermark';
import { EVENT_OUTBOX_PAGE_SQL } from '../../../src/publish/sql/purge-event-outbox';

const NOW = Date.UTC(2031, 0, 1);

function retentionWith(watermark: PublishedWatermark, retentionMs: number) {
  /** The age (ms before NOW) of the cutoff of every page read. */
  const cutoffs: number[] = [];
  const raw = async (sql: string, bindings: unknown[]) => {
    if (sql.startsWith('SELECT NOW(3) - INTERVAL ? MICROSECOND')) return [[{ cutoff: new Date(NOW - (bindings[0] as number) / 1000) }]];
    if (sql === EVENT_OUTBOX_PAGE_SQL) {
      cutoffs.push(NOW - (bindings[0] as Date).getTime());
      return [[1, 2, 3].map((id) => ({ id, old: 1 }))];
    }
    if (sql.startsWith('DELETE FROM event_outbox')) return [{ affectedRows: (bindings[0] as unknown[]).length }];
    throw new Error(`unexpected statement: ${sql}`);
  };
  const db = { raw } as unknown as Knex;
  const published = async () => watermark;
  const retention = new OutboxRetention({ db, retentionMs, batchSize: 10, pauseMs: 0, intervalMs: 60_000, logger: createLogger('silent'), published });
  return { retention, cutoffs };
}

test('nothing known to be published: a pass deletes nothing and reads no page', async () => {
  const { retention, cutoffs } = retentionWith({ waiting: 'no offset committed yet' }, 1);
  await expect(retention.purgeOnce()).resolves.toBe(0);
  expect(cutoffs).toEqual([]);
});

test('the cutoff is the older of the retention and the watermark', async () => {
  const held = retentionWith({ before: new Date(NOW - 90_000) }, 1_000);
  await expect(held.retention.purgeOnce()).resolves.toBe(3);
  expect(held.cutoffs).toEqual([90_000]);
  const byAge = retentionWith({ before: new Date(NOW - 65_000) }, 86_400_000);
  await expect(byAge.retention.purgeOnce()).resolves.toBe(3);
  expect(byAge.cutoffs).toEqual([86_400_000]);
});
