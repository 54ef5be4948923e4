import type { Config } from '../config';
import { declaredTopics, TopicDeclaration, Topology } from '../core/topology';
import { createKafka } from '../kafka/client';
import { applyTopics } from '../kafka/topics-apply';
import { pinNewGroupToEnd } from '../kafka/pin-group-start';
import { groupIdOf } from '../roles';
import type { Logger } from '../ops/logger';
import { RetryPolicies } from '../core/retry-policy';
import { retry } from '../ops/retry';
import type { EntityCatalogue } from '../core/entity-catalogue';
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
 * Prints what was created and any drift; returns the number of drifted settings. With
 * TB_CDC_START_FROM=latest it also pins a new repartitioner group at the current end of the CDC
 * topics (kafka/pin-group-start.ts): a deployment reads every change made after this command.
 */
export async function topicsApply(config: Config, topology: Topology, catalogue: EntityCatalogue, logger: Logger): Promise<number> {
  const admin = createKafka(config.kafka, logger, '-topics').admin();
  await admin.connect();
  try {
    // Idempotent, so safe to try again: a topic created by the failed try counts as present.
    const report = await retry(() => applyTopics(admin, [...declaredTopics(topology), ...cdcTopicDeclarations(config, catalogue)]), { policy: RetryPolicies.newTopics, what: 'applying the topics', logger });
    console.log(`topics: ${report.created.length} created, ${report.existing.length} already present, ${report.drift.length} drifted`);
    for (const d of report.drift) console.log(`drift: ${d.topic} ${d.what}: declared ${d.declared}, actual ${d.actual}`);
    if (config.cdc.startFrom === 'latest') {
      // A new deployment starts reading CDC here: nothing written from now on is skipped.
      const group = groupIdOf(config.groupPrefix, 'repartitioner');
      const outcome = await retry(() => pinNewGroupToEnd(admin, group, Object.keys(cdcTopics(config, catalogue))), { policy: RetryPolicies.newTopics, what: `pinning ${group} at the end of the CDC topics`, logger });
      console.log(`${group}: ${outcome === 'pinned' ? 'new group, starts at the current end of the CDC topics (existing rows: timebucket backfill)' : outcome === 'busy' ? 'running, left alone' : 'resumes from its committed offsets'}`);
    }
    return report.drift.length;
  } finally {
    await admin.disconnect();
  }
}

