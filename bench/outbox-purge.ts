/**
 * Benchmark: what leaving event_outbox costs on the hot path. The router publishes from the
 * binlog, so a row could leave the table in the transaction that writes it, or later by
 * retention. N encoded COUPON_EXPIRED events (the expirer's rows, built by its encoder) are
 * written in transactions of B, once as `INSERT IGNORE` alone and once as `INSERT IGNORE` then
 * `DELETE` of the same rows in the same transaction, each into a database of its own, and the
 * binlog bytes and the database server's CPU per event are read around each.
 *
 *   make bench-outbox-purge [N=100000] [BATCH=2000]
 *
 * Retention's own DELETE runs later, off the hot path, in pages (publish/sql/purge-event-outbox.ts).
 * Prints one JSON line. Not a test: nothing is asserted.
 */
import { loadConfig } from '../src/config';
import { transitionOf } from '../src/core/entity-catalogue';
import { transitionEvent } from '../src/core/events';
import { insertEventOutbox } from '../src/publish/sql/insert-event-outbox';
import { loadEntities } from '../src/ops/load-entities';
import { createEventEncoder, type EncodedEvent } from '../src/publish/event-encoder';
import { eventSchemas } from '../src/publish/schemas';
import { createBenchDatabase } from './lib/bench-database';
import { binlogBytesWritten } from './lib/db-server';
import { cpuSeconds } from './lib/proc';
import { stackProcesses } from './lib/stack-processes';

const config = loadConfig(process.env);
const n = Number(process.env['N'] ?? 200_000);
const batch = Number(process.env['BATCH'] ?? 2_000);
const catalogue = loadEntities(config.entitiesPath);
const expired = transitionOf(catalogue, 'coupon', 'expired');
const encoder = createEventEncoder({
  catalogue,
  topics: { COUPON_EXPIRED: 'bench.coupon-expired', ORDER_CANCELLED: 'bench.order-cancelled' },
  schemaTexts: eventSchemas(catalogue),
  registryUrl: config.registry.url,
});
encoder.setSchemaIds({ COUPON_EXPIRED: 1, ORDER_CANCELLED: 2 });

function rows(from: number, count: number): EncodedEvent[] {
  const due = Date.UTC(2031, 0, 1);
  return Array.from({ length: count }, (_, i) => {
    const id = String(from + i);
    const event = transitionEvent(
      expired,
      { id, status: 'ACTIVE', dueAtMs: due, columns: { user_id: '7', version: 0 } },
      { occurredAtMs: due + 5, path: 'stream', effects: [] },
    );
    const r = encoder.encode(event, id);
    if (!r.ok) throw new Error(r.reason);
    return r.row;
  });
}

async function measure(deleteInTransaction: boolean): Promise<Record<string, number>> {
  const bench = await createBenchDatabase(config, deleteInTransaction ? 'purge_tx' : 'purge_ret');
  // Server 1, whichever it runs (TB_DB_FLAVOUR).
  const server = stackProcesses().find((p) => p.name === 'mariadb' || p.name === 'mysql');
  try {
    const binlogBefore = await binlogBytesWritten(bench.db);
    const cpuBefore = server ? cpuSeconds(server.pid) : null;
    const startedAt = Date.now();
    for (let i = 1; i <= n; i += batch) {
      const part = rows(i, Math.min(batch, n - i + 1));
      await bench.db.transaction(async (trx) => {
        await insertEventOutbox(trx, part);
        if (deleteInTransaction) await trx.raw('DELETE FROM event_outbox WHERE event_key IN (?)', [part.map((r) => r.eventKey)]);
      });
    }
    const ms = Date.now() - startedAt;
    const cpuAfter = server ? cpuSeconds(server.pid) : null;
    const binlog = (await binlogBytesWritten(bench.db)) - binlogBefore;
    return {
      binlog_bytes_per_event: Math.round(binlog / n),
      database_cpu_us_per_event: cpuBefore === null || cpuAfter === null ? -1 : Math.round(((cpuAfter - cpuBefore) * 1e6) / n),
      wall_us_per_event: Math.round((ms * 1000) / n),
    };
  } finally {
    await bench.drop();
  }
}

async function main(): Promise<void> {
  const retention = await measure(false);
  const inTransaction = await measure(true);
  console.log(JSON.stringify({ bench: 'outbox-purge', n, batch, insert_only: retention, insert_then_delete: inTransaction }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
