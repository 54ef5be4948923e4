/**
 * Wires the control switches for one process: the poller over the deployment's rows (scope =
 * TB_GROUP_PREFIX) for the catalogue's switches (one per entity, and the scanner's), its
 * metrics, and the gate the expirer and the scanner apply.
 */
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Clock } from '../core/clock';
import { entityNames, type EntityCatalogue } from '../core/entity-catalogue';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import { group } from '../runtime/group';
import type { Component } from '../runtime/lifecycle';
import { ControlSwitches } from './switches';
import { readSwitches } from './sql/switch-store';
import { createTransitionGate, TransitionGate } from './gate';
import { summarize, switchNamesOf, SwitchSummary } from './switch-state';

/** The switches' poller, started, with the gate the stages apply and the summary /readyz shows. */
export type Control = Component & Readonly<{ gate: TransitionGate; summary: () => SwitchSummary }>;

export async function startControl(ctx: {
  config: Config;
  db: Knex;
  catalogue: EntityCatalogue;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}): Promise<Control> {
  const names = switchNamesOf(entityNames(ctx.catalogue));
  const switches = new ControlSwitches({
    names,
    read: () => readSwitches(ctx.db, ctx.config.groupPrefix, names),
    pollMs: ctx.config.control.pollMs,
    logger: ctx.logger.child({ component: 'control', scope: ctx.config.groupPrefix }),
    onPollFailed: () => ctx.metrics.controlPollFailures.inc(),
  });
  const control = group('control', { switches });
  await control.start();
  ctx.metrics.trackControl(() => names.map((what) => ({ what, paused: switches.paused(what), perSecond: switches.perSecond(what) ?? null })));
  return Object.assign(control, { gate: createTransitionGate(switches, ctx.clock), summary: () => summarize(switches.current()) });
}
