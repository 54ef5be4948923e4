/**
 * Wires the cascader role: a hold consumer over the coarser rings whose sink routes each
 * released entry again (hold/cascader-sink.ts), and the forecast's metrics
 * (hold/forecast-loop.ts), which every ring's offsets feed. A topology of one tier has nothing
 * to cascade.
 */
import { ringTopics } from '../core/topology';
import { tiersReadBy } from '../roles';
import type { RoleStarter, StartedRole } from '../role-context';
import { forecastLoop } from './forecast-loop';
import { routingSink, startHoldStage } from './start-hold-stage';

export const startCascader: RoleStarter = async (ctx) => {
  const role = 'cascader';
  const coarser = tiersReadBy(role, ctx.topology);
  if (coarser.length === 0) return { stop: async () => undefined };
  const logger = ctx.logger.child({ role });
  const sink = routingSink(ctx, logger, (count) => ctx.metrics.cascaded.inc(count));
  const stage = await startHoldStage(ctx, role, ringTopics(ctx.topology, coarser), sink, logger);
  if (ctx.config.forecastIntervalMs === 0) return stage;
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
  void loop.start();
  const started: StartedRole = {
    ...stage,
    stop: async () => {
      await Promise.all([stage.stop(), loop.stop().then(() => admin.disconnect())]);
    },
  };
  return started;
};
