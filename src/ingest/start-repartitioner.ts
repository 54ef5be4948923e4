/**
 * Wires the repartitioner role: the CDC topics of the catalogue, a new group pinned where the
 * stream starts (TB_CDC_START_FROM), the stage itself (ingest/repartitioner.ts) and its metrics.
 */
import { cdcTopics } from './cdc-topics';
import { Repartitioner } from './repartitioner';
import { pinGroup, startPositions } from '../kafka/pin-group-start';
import type { Config } from '../config';
import type { KafkaStageContext } from '../kafka/kafka-stage-context';
import { roleConsumer } from '../kafka/role-consumer';
import { groupIdOf } from '../roles';
import { group, resource, type Group } from '../runtime/group';

export type RepartitionerContext = KafkaStageContext<'repartitioner'> & Readonly<{ config: Pick<Config, 'groupPrefix' | 'consumer' | 'cdc' | 'databases'> }>;

export async function startRepartitioner(ctx: RepartitionerContext): Promise<Group> {
  const byTopic = cdcTopics(ctx.config, ctx.catalogue);
  const admin = ctx.kafka.admin();
  await admin.connect();
  const groupId = groupIdOf(ctx.config.groupPrefix, 'repartitioner');
  // Taken before start-up returns: a row written after that is never skipped (pin-group-start.ts).
  const positions = ctx.config.cdc.startFrom === 'latest' ? await startPositions(admin, groupId, Object.keys(byTopic)) : undefined;
  const stage = new Repartitioner({
    listTopics: () => admin.listTopics(),
    consumer: roleConsumer(ctx.kafka, ctx.config, 'repartitioner'),
    group: groupId,
    stallMs: ctx.config.consumer.stallMs,
    startFrom: ctx.config.cdc.startFrom,
    ...(positions && { pinNewGroup: () => pinGroup(admin, groupId, positions) }),
    producer: ctx.producer,
    cdcTopics: byTopic,
    catalogue: ctx.catalogue,
    topology: ctx.topology,
    dlq: ctx.dlqFor('repartitioner'),
    clock: ctx.clock,
    logger: ctx.logger.child({ role: 'repartitioner' }),
    onRouted: (lane, count) => ctx.metrics.routed.inc({ lane }, count),
    onReminderSkipped: (reason, t) => ctx.metrics.remindersSkipped.inc({ entity: t.entity, transition: t.name, reason }),
  });
  ctx.metrics.trackCdcLag(() => stage.cdcLag());
  const role = group('repartitioner', { 'admin client': resource(() => admin.disconnect()), repartitioner: stage });
  await role.start();
  return role;
}
