/**
 * Wires the cascader role: a hold consumer over the coarser rings whose sink routes each
 * released entry again (hold/cascader-sink.ts), and the forecast's metrics
 * (hold/forecast-loop.ts), which every ring's offsets feed. A topology of one tier has nothing
 * to cascade.
 */
import { ringTopics } from '../core/topology';
import { tiersReadBy } from '../roles';
import type { Config } from '../config';
import { group, resource, type Group } from '../runtime/group';
import { forecastLoop } from './forecast-loop';
import { routingSink, startHoldStage, type HoldStageContext } from './start-hold-stage';

export type CascaderContext = HoldStageContext & Readonly<{ config: Pick<Config, 'forecastIntervalMs'> }>;

export async function startCascader(ctx: CascaderContext): Promise<Group> {
  const role = 'cascader';
  const coarser = tiersReadBy(role, ctx.topology);
  if (coarser.length === 0) return group(role, {});
  const logger = ctx.logger.child({ role });
  const sink = routingSink(ctx, logger, (count) => ctx.metrics.cascaded.inc(count));
  const stage = await startHoldStage(ctx, role, ringTopics(ctx.topology, coarser), sink, logger);
  if (ctx.config.forecastIntervalMs === 0) return stage;
  // The forecast's loop, then its admin client, stopped while the hold stage stops (together).
  const admin = ctx.kafka.admin();
  const loop = forecastLoop({
    admin,
    topology: ctx.topology,
    groupPrefix: ctx.config.groupPrefix,
    clock: ctx.clock,
    intervalMs: ctx.config.forecastIntervalMs,
    gauge: ctx.metrics.forecastEntries,
    logger: logger.child({ component: 'forecast' }),
  });
  const forecast = group('forecast', { 'admin client': resource(() => admin.disconnect()), loop });
  const cascader = group(role, { [role]: stage, forecast }, { stopOrder: 'together' });
  await cascader.start();
  return cascader;
}
