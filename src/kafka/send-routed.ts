/**
 * Routes bucket entries at the writer's clock and appends them, with a bound on how late an
 * append may land (finding: I1 assumed "routed now, appended soon" and nothing enforced it).
 *
 * The I1 proof (core/router.ts) budgets clock skew plus produce latency under guard × width of
 * the finest tier. A send whose retries outlast that may have appended ring entries after the
 * next lap of the same topic was written, where they would wait a whole lap (two hours in
 * production). So when a send took longer than `appendBudgetMs`, the ring-bound entries are
 * routed again at the new clock and sent again: the fresh copies are on time, and the possibly
 * late ones are harmless duplicates (the expirer's guarded update makes them no-ops). Due-lane
 * entries have no lap to miss and are never re-sent.
 */
import type { Producer } from 'kafkajs';
import type { BucketEntry } from '../core/bucket-entry';
import { bucketRecord, byTopic, BucketRecord } from '../core/bucket-record';
import type { Clock } from '../core/clock';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { Topology } from '../core/topology';
import type { Logger } from '../ops/logger';

export type SendRoutedOptions = Readonly<{
  producer: Pick<Producer, 'sendBatch'>;
  topology: Topology;
  /** Encodes the entries (their wire version depends on the transition). */
  catalogue: EntityCatalogue;
  clock: Clock;
  appendBudgetMs: number;
  logger: Logger;
}>;

/** Half the slack of the I1 proof: the other half is left to clock skew between writers. */
export function appendBudgetMs(topology: Topology): number {
  const finest = topology.tiers[0]!;
  return Math.floor((finest.guard * finest.widthMs) / 2);
}

/** Returns the records whose append is known to be on time (the last routing of each entry). */
export async function sendRouted(opts: SendRoutedOptions, entries: readonly BucketEntry[]): Promise<BucketRecord[]> {
  let pending = entries;
  const onTime: BucketRecord[] = [];
  for (let attempt = 1; pending.length > 0; attempt += 1) {
    const routedAt = opts.clock.now();
    const records = pending.map((e) => bucketRecord(opts.topology, opts.catalogue, e, routedAt));
    await opts.producer.sendBatch({ acks: -1, topicMessages: byTopic(records) });
    const tookMs = opts.clock.now() - routedAt;
    if (tookMs <= opts.appendBudgetMs) {
      onTime.push(...records);
      break;
    }
    // Late: due-lane records stand; ring entries go round again.
    const ring = records.map((r) => r.headers['bucket_start'] !== undefined);
    onTime.push(...records.filter((_, i) => !ring[i]));
    pending = pending.filter((_, i) => ring[i]);
    if (pending.length > 0) {
      opts.logger.warn(
        { tookMs, appendBudgetMs: opts.appendBudgetMs, entries: pending.length, attempt },
        'append outlasted the I1 budget: ring entries routed again at the current clock',
      );
    }
  }
  return onTime;
}
