import type { Config } from '../config';
import { declaredTopics, isBucketLane, TopicDeclaration, Topology } from '../core/topology';
import { createKafka } from '../kafka/client';
import { applyTopics, isPartitionGrowth, type ApplyReport } from '../kafka/topics-apply';
import { pinNewGroupToEnd } from '../kafka/pin-group-start';
import { groupIdOf } from '../roles';
import type { Logger } from '../ops/logger';
import { RetryPolicies } from '../runtime/retry-policy';
import { retry } from '../runtime/retry';
import { databasesOf, type EntityCatalogue } from '../core/entity-catalogue';
import { cdcTopics } from '../ingest/cdc-topics';

/**
 * The CDC topics too: Debezium creates a table's topic only with the table's first change, and
 * until both exist the repartitioner cannot subscribe (a kafkajs subscription never picks up a
 * topic created later), so a deployment on a database whose tables have not changed yet would
 * not become ready. Declared as the connector's topic.creation settings make them, so a topic
 * Debezium created shows no drift.
 */
export function cdcTopicDeclarations(config: Config, catalogue: EntityCatalogue): TopicDeclaration[] {
  const cdcConfig = { 'cleanup.policy': 'delete', 'retention.ms': String(config.cdc.retentionMs) };
  return Object.keys(cdcTopics(config, catalogue)).map((topic) => ({ topic, partitions: config.cdc.partitions, config: cdcConfig }));
}

/**
 * What a topology change implies, one line each: the partitions grown or left to grow, settings
 * that differ, and ring topics no role reads any more (docs/operations.md, "Changing the topology").
 */
export function topologyChangeReport(report: ApplyReport): string[] {
  const lines: string[] = [];
  for (const d of report.grown) lines.push(`grown: ${d.topic} partitions ${d.actual} -> ${d.declared}`);
  for (const d of report.drift) lines.push(`drift: ${d.topic} ${d.what}: declared ${d.declared}, actual ${d.actual}`);
  const growable = report.drift.filter(isPartitionGrowth);
  if (growable.length > 0) {
    lines.push(
      `implies: ${growable.length} topic(s) declare more partitions than they have; \`topics apply --grow-partitions\` adds them to the bucket lanes (entries in flight stay where they are, new ones go by the new count); a CDC or event topic is grown by hand, if at all: its keys would change partitions`,
    );
  }
  if (report.orphans.length > 0) {
    lines.push(
      `implies: ${report.orphans.length} ring topic(s) are no longer in the topology (${report.orphans.slice(0, 3).join(', ')}${report.orphans.length > 3 ? ', …' : ''}): ` +
        'no role of this topology reads them; keep the previous version running until their consumer lag is 0, or the rows they hold wait for the compensation scanner',
    );
  }
  return lines;
}

/**
 * Prints what was created and any drift; returns the number of drifted settings. With
 * TB_CDC_START_FROM=latest it also pins a new repartitioner group at the current end of the CDC
 * topics (kafka/pin-group-start.ts): a deployment reads every change made after this command.
 */
export async function topicsApply(
  config: Config,
  topology: Topology,
  catalogue: EntityCatalogue,
  logger: Logger,
  opts: { growPartitions?: boolean } = {},
): Promise<number> {
  const admin = createKafka(config.kafka, logger, '-topics').admin();
  await admin.connect();
  try {
    // Idempotent, so safe to try again: a topic created by the failed try counts as present.
    const declared = [...declaredTopics(topology, databasesOf(catalogue)), ...cdcTopicDeclarations(config, catalogue)];
    // Only the bucket lanes grow: a CDC or event topic's keys would move between partitions.
    const applyOptions = { growPartitions: (topic: string) => opts.growPartitions === true && isBucketLane(topology, topic), prefix: topology.prefix };
    const report = await retry(() => applyTopics(admin, declared, applyOptions), { policy: RetryPolicies.newTopics, what: 'applying the topics', logger });
    console.log(
      `topics: ${report.created.length} created, ${report.existing.length} already present, ${report.grown.length} grown, ${report.drift.length} drifted`,
    );
    for (const line of topologyChangeReport(report)) console.log(line);
    if (config.cdc.startFrom === 'latest') {
      // A new deployment starts reading CDC here: nothing written from now on is skipped.
      const group = groupIdOf(config.groupPrefix, 'repartitioner');
      const outcome = await retry(() => pinNewGroupToEnd(admin, group, Object.keys(cdcTopics(config, catalogue))), {
        policy: RetryPolicies.newTopics,
        what: `pinning ${group} at the end of the CDC topics`,
        logger,
      });
      console.log(
        `${group}: ${outcome === 'pinned' ? 'new group, starts at the current end of the CDC topics (existing rows: timebucket backfill)' : outcome === 'busy' ? 'running, left alone' : 'resumes from its committed offsets'}`,
      );
    }
    return report.drift.length;
  } finally {
    await admin.disconnect();
  }
}
