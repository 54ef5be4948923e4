/** What one stream expiry batch did, in metrics: transitions, their delay past due (by the database clock), retries and no-ops. */
import type { BatchOutcome } from '../expire/batch-outcome';
import type { Metrics } from '../ops/metrics';

export function observeExpiryBatch(metrics: Metrics, entity: string, outcome: BatchOutcome): void {
  if (outcome.transitioned.length > 0) metrics.transitions.inc({ entity, path: 'stream' }, outcome.transitioned.length);
  for (const t of outcome.transitioned) metrics.delay.observe({ entity }, Math.max(0, outcome.dbNowMs - t.dueAtMs) / 1000);
  if (outcome.notYetDue.length > 0) metrics.notYetDue.inc({ entity }, outcome.notYetDue.length);
  if (outcome.stale.length > 0) metrics.stale.inc({ entity }, outcome.stale.length);
}
