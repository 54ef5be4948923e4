/** Prints CDC events of every mapped table as they arrive: a look at what Debezium sends. */
import { DateTime } from 'luxon';
import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { createKafka } from '../kafka/client';
import { decodeCdcValue } from '../core/cdc-envelope';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { cdcTopics } from '../ingest/cdc-topics';
import { KafkaUnavailableError } from '../core/errors';

export async function cdcTail(config: Config, catalogue: EntityCatalogue, logger: Logger, opts: { seconds?: number }): Promise<void> {
  const kafka = createKafka(config.kafka, logger, '-cdc-tail');
  const byTopic = cdcTopics(config, catalogue);
  const topics = Object.keys(byTopic);

  const admin = kafka.admin();
  await admin.connect();
  // Debezium creates a table's topic with its first event; wait (bounded) until one exists.
  const deadline = Date.now() + 60_000;
  let existing: string[] = [];
  while (existing.length === 0 && Date.now() < deadline) {
    existing = (await admin.listTopics()).filter((t) => topics.includes(t));
    if (existing.length === 0) await new Promise((r) => setTimeout(r, 500));
  }
  await admin.disconnect();
  if (existing.length === 0)
    throw new KafkaUnavailableError(`no CDC topic (${topics.join(', ')}) appeared within 60 s: is the connector running?`, { topics: topics.length });

  const consumer = kafka.consumer({ groupId: `timebucket-cdc-tail-${process.pid}` });
  await consumer.connect();
  await consumer.subscribe({ topics: existing, fromBeginning: false });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const event = decodeCdcValue(message.value);
      if (event.kind === 'tombstone') {
        console.log(`${topic}[${partition}]@${message.offset} tombstone key=${message.key?.toString()}`);
        return;
      }
      const row = event.after ?? event.before;
      const entity = byTopic[topic]!.entity;
      const dues = entity.transitions.map((t) => {
        const v = row?.[t.due.column];
        const ms = typeof v === 'number' ? (t.due.kind === 'epoch_s' ? v * 1000 : v) : undefined;
        return `${t.due.column}=${ms === undefined ? String(v) : DateTime.fromMillis(ms, { zone: 'utc' }).toISO()}`;
      });
      console.log(
        `${topic}[${partition}]@${message.offset} op=${event.op} ${entity.name} id=${String(row?.[entity.idColumn])} status=${String(row?.[entity.status.column])} ${[...new Set(dues)].join(' ')}`,
      );
    },
  });

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (opts.seconds !== undefined) setTimeout(stop, opts.seconds * 1000).unref();
  });
  await consumer.disconnect();
}
