import type { Config } from '../config';
import { declaredTopics, Topology } from '../core/topology';
import { createKafka } from '../kafka/client';
import { applyTopics } from '../kafka/topics-apply';
import type { Logger } from '../ops/logger';

/** Prints what was created and any drift; returns the number of drifted settings. */
export async function topicsApply(config: Config, topology: Topology, logger: Logger): Promise<number> {
  const admin = createKafka(config.kafka, logger, '-topics').admin();
  await admin.connect();
  try {
    const report = await applyTopics(admin, declaredTopics(topology));
    console.log(`topics: ${report.created.length} created, ${report.existing.length} already present, ${report.drift.length} drifted`);
    for (const d of report.drift) console.log(`drift: ${d.topic} ${d.what}: declared ${d.declared}, actual ${d.actual}`);
    return report.drift.length;
  } finally {
    await admin.disconnect();
  }
}
