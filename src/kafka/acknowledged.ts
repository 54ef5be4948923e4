/**
 * Whether a send's answer acknowledges every partition it wrote to. kafkajs's send can resolve
 * without having sent some messages at all: it keeps the brokers that answered across its own
 * retries, so when a broker dies mid-send and its partitions move to a broker that had already
 * answered for others, the retry skips that broker and the moved partitions' messages are
 * never sent, yet the send resolves (kafkajs src/producer/sendMessages.js, `responsePerBroker`;
 * upstream pull request tulios/kafkajs#1798). Seen in test/cluster/broker-kill: three orders'
 * ring entries never written, the repartitioner's send "succeeded" and the CDC offsets were
 * committed. Every acknowledged (topic, partition) is in the answer, so a missing one is a
 * send to retry.
 *
 * Messages with an explicit partition are checked by partition (bucket records; dead letters,
 * which the DLQ writer places where the key hash would); those left to the client's partitioner
 * only by topic: at least one partition of the topic acknowledged.
 */
import type { ProducerBatch, ProducerRecord, RecordMetadata } from 'kafkajs';
import { KafkaUnavailableError } from '../core/errors';

/** The (topic, partition)s and the topics of keyed messages a send writes to, as `topic/partition` and `topic/*`. */
function targetsOf(topicMessages: ReadonlyArray<Pick<ProducerRecord, 'topic' | 'messages'>>): Set<string> {
  const targets = new Set<string>();
  for (const { topic, messages } of topicMessages) for (const m of messages) targets.add(m.partition === undefined ? `${topic}/*` : `${topic}/${m.partition}`);
  return targets;
}

/** Throws KafkaUnavailableError (retriable) when the answer lacks a partition the send wrote to. */
export function assertAcknowledged(sent: ProducerBatch | ProducerRecord, answer: readonly RecordMetadata[]): void {
  const topicMessages = 'topicMessages' in sent ? (sent.topicMessages ?? []) : [sent as ProducerRecord];
  const acked = new Set(answer.filter((m) => m.errorCode === 0).flatMap((m) => [`${m.topicName}/${m.partition}`, `${m.topicName}/*`]));
  const missing = [...targetsOf(topicMessages)].filter((t) => !acked.has(t));
  if (missing.length > 0) {
    throw new KafkaUnavailableError(
      `the send resolved without an acknowledgement for ${missing.sort().join(', ')}: those messages were not written (a broker left mid-send)`,
      { missing },
    );
  }
}
