/**
 * Reads the pipeline's event topics back and decodes them through the registry, with the
 * events' own client: longs (ids, version) decode exactly, as bigints. Each record is counted
 * once by its position: a consumer that restarts (a leader not yet elected on a new topic) reads
 * again from its last commit, which is Kafka delivering twice, not the outbox connector
 * publishing twice (that would be a second record, at another offset).
 */
import type { Consumer } from 'kafkajs';
import type { Config } from '../../src/config';
import { createKafka } from '../../src/kafka/client';
import { createSchemaRegistry } from '../../src/publish/schema-registry';
import { logger, uniqueName } from './stack';

/** `receivedAt`: when this process read it (ms, this machine's clock). */
export type SeenEvent = { topic: string; key: string; headers: Record<string, string>; value: Record<string, unknown>; receivedAt: number };

export async function collectEvents(config: Config, topics: string[]): Promise<{ events: SeenEvent[]; undecodable: unknown[]; stop: () => Promise<void> }> {
  const registry = createSchemaRegistry(config.registry);
  const consumer: Consumer = createKafka(config.kafka, logger, '-test-events').consumer({ groupId: uniqueName('tb-events'), maxWaitTimeInMs: 200 });
  const events: SeenEvent[] = [];
  const undecodable: unknown[] = [];
  const seen = new Set<string>();
  // Said in the file's pipeline log, which a failed file's output prints: a reader that crashed
  // for good or events it could not decode explain a wait on events that timed out.
  consumer.on(consumer.events.CRASH, ({ payload }) => logger.error({ err: payload.error, restart: payload.restart, topics }, 'test event reader crashed'));
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const position = `${topic}/${partition}/${message.offset}`;
      if (seen.has(position)) return;
      seen.add(position);
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString() ?? '']));
      try {
        const value = (await registry.decode(message.value!)) as Record<string, unknown>;
        events.push({ topic, key: message.key?.toString() ?? '', headers, value, receivedAt: Date.now() });
      } catch (err) {
        logger.warn({ err, position }, 'test event reader: an event it could not decode');
        undecodable.push(err);
      }
    },
  });
  return { events, undecodable, stop: () => consumer.disconnect() };
}

/** The distinct event_keys among `events` of the entities `ids` (the message key is the entity id). */
export function eventKeysOf(events: readonly SeenEvent[], ids: ReadonlyArray<string | number>): Set<string> {
  const wanted = new Set(ids.map(String));
  return new Set(events.filter((e) => wanted.has(e.key)).map((e) => e.headers['event_key']!));
}
