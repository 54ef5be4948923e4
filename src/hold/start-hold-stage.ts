/**
 * The shared shape of the expirer and the cascader: a hold consumer over their topics feeding
 * their sink, with misplaced entries routed again (core/held-record.ts) and the due-lag metrics.
 */
import type { Config } from '../config';
import { heldRecordReader } from '../core/held-record';
import type { KafkaStageContext } from '../kafka/kafka-stage-context';
import { roleConsumer } from '../kafka/role-consumer';
import type { Logger } from '../ops/logger';
import { groupIdOf, type HoldRole } from '../roles';
import { group, resource, type Group } from '../runtime/group';
import { CascaderSink } from './cascader-sink';
import type { ExpirerSink } from './expirer-sink';
import { HoldConsumer } from './hold-consumer';

/** What a hold stage reads of the process. */
export type HoldStageContext = KafkaStageContext<HoldRole> & Readonly<{ config: Pick<Config, 'groupPrefix' | 'consumer' | 'expirer' | 'shutdownTimeoutMs'> }>;

/** A hold consumer over `topics` feeding `sink`: the shared shape of the expirer and the cascader. */
export async function startHoldStage(
  ctx: HoldStageContext,
  role: HoldRole,
  topics: string[],
  sink: ExpirerSink | CascaderSink,
  logger: Logger,
  /** Told the consumer once it runs (the expirer's pacing reads its unread due entries). */
  onConsumer?: (stage: Pick<HoldConsumer, 'unreadDue'>) => void,
): Promise<Group> {
  // Only for the due-lag metric of partitions paused at the memory cap (HoldConsumer.fetchEnds).
  const admin = ctx.kafka.admin();
  await admin.connect();
  // Entries this topology would not have put where they are (a topology change, a writer clock
  // far ahead) are routed again, as the cascader routes released ones (core/held-record.ts).
  const reroute = routingSink(ctx, logger.child({ component: 'reroute' }), (count) => ctx.metrics.rerouted.inc({ stage: role }, count));
  ctx.metrics.rerouted.inc({ stage: role }, 0);
  const stage = new HoldConsumer({
    fetchEnds: (topic) => admin.fetchTopicOffsets(topic),
    consumer: roleConsumer(ctx.kafka, ctx.config, role),
    topics,
    group: groupIdOf(ctx.config.groupPrefix, role),
    read: heldRecordReader(ctx.topology, ctx.catalogue),
    sink,
    reroute,
    // The expirer's finest tier is released early; its entries are due from their bucket on.
    dueFrom: role === 'expirer' ? 'bucket' : 'release',
    dlq: ctx.dlqFor(role),
    clock: ctx.clock,
    maxInMemoryPerPartition: ctx.config.expirer.maxInMemoryPerPartition,
    commitIntervalMs: ctx.config.expirer.commitIntervalMs,
    stallMs: ctx.config.consumer.stallMs,
    // Its two stop steps (the last commit, the group leave) within half the shutdown budget,
    // which the process's other parts share.
    stopDeadlineMs: Math.max(1_000, Math.floor(ctx.config.shutdownTimeoutMs / 4)),
    logger,
  });
  // Stopped in reverse: the consumer (which closes both sinks), then the admin client.
  const started = group(role, { 'admin client': resource(() => admin.disconnect()), consumer: stage });
  try {
    await started.start(); // a consumer that fails to start leaves with the admin client
  } catch (err) {
    sink.close();
    reroute.close();
    throw err;
  }
  ctx.metrics.trackHold(role, () => stage.stats());
  onConsumer?.(stage);
  return started;
}

/** A sink that routes each entry it takes again, at this process's clock: the cascader's, and every hold stage's re-routing. */
export function routingSink(
  ctx: Pick<HoldStageContext, 'producer' | 'topology' | 'catalogue' | 'clock'>,
  logger: Logger,
  onRouted: (count: number) => void,
): CascaderSink {
  return new CascaderSink({
    producer: ctx.producer,
    topology: ctx.topology,
    catalogue: ctx.catalogue,
    clock: ctx.clock,
    flushIntervalMs: 50,
    maxBatchSize: 1_000,
    logger,
    onCascaded: onRouted,
  });
}
