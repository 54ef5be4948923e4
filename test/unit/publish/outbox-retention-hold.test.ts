/**
 * Retention held by the capture watermark: a pass deletes only rows older than both the retention
 * and the age the probe confirms, and nothing while no probe has been confirmed. The database is
 * a fake answering the cutoff query (NOW(3) − the age asked) on a fixed clock.
 */
import type { Knex } from 'knex';
import { createLogger } from '../../../src/ops/logger';
import { OutboxRetention, type PurgePageFn } from '../../../src/publish/outbox-retention';

const NOW = Date.UTC(2031, 0, 1);
/** Answers purgeCutoff's `SELECT NOW(3) - INTERVAL ? MICROSECOND`. */
const db = { raw: async (_sql: string, [micros]: [number]) => [[{ cutoff: new Date(NOW - micros / 1000) }]] } as unknown as Knex;

function retentionWith(capturedAgeMs: (() => number | undefined) | undefined, retentionMs: number) {
  const cutoffs: number[] = [];
  const purgePage: PurgePageFn<{ id: string }> = async (_db, cutoff) => {
    cutoffs.push(NOW - cutoff.getTime());
    return { deleted: 3, next: { id: '3' }, full: false };
  };
  const retention = new OutboxRetention<{ id: string }>({ db, purgePage, retentionMs, batchSize: 10, pauseMs: 0, intervalMs: 60_000, logger: createLogger('silent'), capturedAgeMs });
  return { retention, cutoffs };
}

test('no probe confirmed yet: a pass deletes nothing and reads no page', async () => {
  const { retention, cutoffs } = retentionWith(() => undefined, 1);
  await expect(retention.purgeOnce()).resolves.toBe(0);
  expect(cutoffs).toEqual([]);
});

test('the cutoff is the older of the retention and the watermark', async () => {
  const held = retentionWith(() => 90_000, 1_000);
  await expect(held.retention.purgeOnce()).resolves.toBe(3);
  expect(held.cutoffs).toEqual([90_000]);
  const byAge = retentionWith(() => 65_000, 86_400_000);
  await byAge.retention.purgeOnce();
  expect(byAge.cutoffs).toEqual([86_400_000]);
});

test('without a watermark (the relay outbox), age alone decides', async () => {
  const { retention, cutoffs } = retentionWith(undefined, 5_000);
  await retention.purgeOnce();
  expect(cutoffs).toEqual([5_000]);
});
