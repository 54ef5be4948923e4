/**
 * Wires the cascader role: a hold consumer over the coarser rings whose sink routes each
 * released entry again (hold/cascader-sink.ts). A topology of one tier has nothing to cascade.
 */
import { ringTopics } from '../core/topology';
import { tiersReadBy } from '../roles';
import type { RoleStarter } from '../role-context';
import { routingSink, startHoldStage } from './start-hold-stage';

export const startCascader: RoleStarter = async (ctx) => {
  const role = 'cascader';
  const coarser = tiersReadBy(role, ctx.topology);
  if (coarser.length === 0) return { stop: async () => undefined };
  const logger = ctx.logger.child({ role });
  const sink = routingSink(ctx, logger, (count) => ctx.metrics.cascaded.inc(count));
  return startHoldStage(ctx, role, ringTopics(ctx.topology, coarser), sink, logger);
};
