/** Wires the scanner role: the shared-cursor page claim, the expiry transactions with path 'scanner', metrics, the switches. */
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Clock } from '../core/clock';
import { cancelOrderBatch } from '../expire/cancel-order-batch';
import { expireCouponBatch } from '../expire/expire-coupon-batch';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import type { TransitionGate } from '../ops/control-gate';
import { CompensationScanner } from './compensation-scanner';
import { claimScanPage } from './sql/claim-scan-page';

export function startScanner(ctx: { config: Config; db: Knex; clock: Clock; logger: Logger; metrics: Metrics; gate?: TransitionGate }): () => Promise<void> {
  const { scanner: cfg } = ctx.config;
  const scanner = new CompensationScanner({
    entities: ['order', 'coupon'],
    claimPage: (entity) => claimScanPage(ctx.db, entity, cfg),
    expireBatch: (entity, entries) => (entity === 'coupon' ? expireCouponBatch(ctx.db, entries, 'scanner') : cancelOrderBatch(ctx.db, entries, 'scanner')),
    intervalMs: cfg.intervalMs,
    maxPagesPerSecond: cfg.maxPagesPerSecond,
    backoff: { baseMs: 200, maxMs: 10_000 },
    clock: ctx.clock,
    logger: ctx.logger.child({ role: 'scanner' }),
    gate: ctx.gate,
    observer: {
      scanned: (entity, rows) => ctx.metrics.scannerScanned.inc({ entity }, rows),
      caught: (entity, outcome) => {
        ctx.metrics.scannerCaught.inc({ entity }, outcome.transitioned.length);
        ctx.metrics.transitions.inc({ entity, path: 'scanner' }, outcome.transitioned.length);
      },
      passComplete: (entity, atMs) => ctx.metrics.scannerLastPass.set({ entity }, atMs / 1000),
    },
  });
  scanner.start();
  return () => scanner.stop();
}
