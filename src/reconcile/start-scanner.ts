/**
 * Wires the scanner role: a shared-cursor page claim per scan cursor of the catalogue, the
 * transitions' batch transactions with path 'scanner', metrics per entity, the switches.
 */
import { Backoffs } from '../runtime/retry-policy';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Clock } from '../core/clock';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import type { TransitionGate } from '../control/gate';
import type { TransitionBatches } from '../expire/transition-batch';
import { CompensationScanner } from './compensation-scanner';
import type { Component } from '../runtime/lifecycle';
import { scanPageClaim } from './sql/claim-scan-page';
import { scanCursorsOf, type ScanCursor } from '../core/scan-cursors';
import type { FirstPassHolds } from '../db/first-pass-holds';

export type ScannerContext = Readonly<{
  config: Pick<Config, 'scanner'>;
  /** The main database (the cursors). */
  db: Knex;
  /** A pool per database (config.databases); the main one is `db`. */
  dbs: Readonly<Record<string, Knex>>;
  catalogue: EntityCatalogue;
  /** The expiry transactions, compiled once for the process (main.ts shares them with the expirer). */
  batches: TransitionBatches;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  gate?: TransitionGate;
  /** The transitions held at a table because their first pass was refused: their cursors are skipped. */
  firstPassHolds?: Pick<FirstPassHolds, 'isHeld'>;
}>;

/** A cursor's loop FAILED fails the role (/healthz, exit 1). */
export async function startScanner(ctx: ScannerContext): Promise<Component> {
  const { scanner: cfg } = ctx.config;
  const cursors = scanCursorsOf(ctx.catalogue);
  const claims = new Map(cursors.map((c) => [c.key, scanPageClaim(ctx.db, c, cfg, ctx.dbs[c.location.database])]));
  const lastPass = lastPassOfEntity(cursors);
  const scanner = new CompensationScanner({
    cursors,
    claimPage: (cursor) => claims.get(cursor.key)!(),
    expireBatch: (cursor, entries) => ctx.batches.run(cursor.transition, entries, 'scanner', cursor.location),
    intervalMs: cfg.intervalMs,
    maxPagesPerSecond: cfg.maxPagesPerSecond,
    backoff: Backoffs.scanner,
    clock: ctx.clock,
    logger: ctx.logger.child({ role: 'scanner' }),
    gate: ctx.gate,
    held: (cursor) => ctx.firstPassHolds?.isHeld(cursor.transition, cursor.location) === true,
    observer: {
      scanned: (cursor, rows) => ctx.metrics.scannerScanned.inc({ entity: cursor.transition.entity }, rows),
      failed: (cursor) => ctx.metrics.scannerPageFailures.inc({ entity: cursor.transition.entity }),
      caught: (cursor, outcome) => {
        const entity = cursor.transition.entity;
        ctx.metrics.scannerCaught.inc({ entity }, outcome.transitioned.length);
        ctx.metrics.transitions.inc({ entity, path: 'scanner' }, outcome.transitioned.length);
      },
      passComplete: (cursor, atMs) => {
        const at = lastPass(cursor, atMs);
        if (at !== undefined) ctx.metrics.scannerLastPass.set({ entity: cursor.transition.entity }, at / 1000);
      },
    },
  });
  await scanner.start();
  return scanner;
}

/**
 * The last-pass gauge is per entity, but an entity may have several cursors (transitions,
 * from-values). It shows when EVERY cursor of the entity last completed a pass (the oldest of
 * their last completions), so a cursor that stopped completing holds it back and the alert on
 * an old pass fires; undefined until each has completed one.
 */
export function lastPassOfEntity(cursors: readonly ScanCursor[]): (cursor: ScanCursor, atMs: number) => number | undefined {
  const last = new Map<string, number>();
  return (cursor, atMs) => {
    last.set(cursor.key, atMs);
    const times = cursors.filter((c) => c.transition.entity === cursor.transition.entity).map((c) => last.get(c.key));
    return times.every((t): t is number => t !== undefined) ? Math.min(...times) : undefined;
  };
}
