/**
 * Events that can never be published as they are (their schema rejects them, or they are larger
 * than their topic takes) go to the dead-letter topic instead of event_outbox: one such row would
 * fail the outbox connector on the same binlog event at every restart, and hold every later event
 * of its database. The dead letter names the event's topic, its key and type, and why; its value
 * is the event as JSON (cut at VALUE_LIMIT_BYTES: the dead letter itself must fit), so the
 * operator can publish it by hand once the cause is fixed (docs/runbooks.md).
 */
import type { KafkaMessage } from 'kafkajs';
import { TimebucketError } from '../core/errors';
import type { EventTopics } from '../core/event-catalogue';
import type { RejectedEvent } from './outbox-writer';
import type { DlqWriter } from '../kafka/dlq-writer';

const VALUE_LIMIT_BYTES = 256 * 1024;

/** The dead-letter record of a rejected event (no source partition or offset: it was never on a topic). */
export function deadLetterOf(rejected: RejectedEvent, topics: EventTopics, nowMs: number): Parameters<DlqWriter['send']>[0] {
  const json = Buffer.from(JSON.stringify(rejected.event));
  const truncated = json.length > VALUE_LIMIT_BYTES;
  const message = {
    key: Buffer.from(rejected.entityId),
    value: truncated ? json.subarray(0, VALUE_LIMIT_BYTES) : json,
    headers: {
      event_key: rejected.event.event_key,
      event_type: rejected.event.event_type,
      event_json_bytes: String(json.length),
      ...(truncated && { event_json_truncated: 'true' }),
    },
    offset: '-1',
    timestamp: String(nowMs),
    attributes: 0,
  } as unknown as KafkaMessage;
  return {
    topic: topics[rejected.event.event_type] ?? rejected.event.event_type,
    partition: -1,
    message,
    error: new TimebucketError(rejected.code, rejected.reason),
  };
}

/** The outbox writer's `rejected`: every rejected event of the transaction to the DLQ, in one send. */
export function deadLetterRejectedEvents(dlq: DlqWriter, topics: EventTopics, now: () => number): (events: readonly RejectedEvent[]) => Promise<void> {
  return (events) => dlq.sendAll(events.map((e) => deadLetterOf(e, topics, now())));
}
