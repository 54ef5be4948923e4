/**
 * The dead-letter queue: a record that cannot be decoded or is invalid is copied to the DLQ
 * topic with the reason and its source coordinates in headers, counted, and the partition
 * moves on (invariant I5: bad input never blocks).
 */
import type { KafkaMessage, Producer } from 'kafkajs';
import { TimebucketError } from '../core/errors';
import type { Logger } from '../ops/logger';

export type DlqRecord = Readonly<{ topic: string; partition: number; message: KafkaMessage; error: unknown }>;

export interface DlqWriter {
  send(record: DlqRecord): Promise<void>;
}

export function createDlqWriter(opts: { producer: Producer; topic: string; logger: Logger; onDeadLetter?: (sourceTopic: string, code: string) => void }): DlqWriter {
  return {
    async send({ topic, partition, message, error }) {
      const code = error instanceof TimebucketError ? error.code : 'UNDECODABLE';
      const reason = error instanceof Error ? error.message : String(error);
      await opts.producer.send({
        topic: opts.topic,
        acks: -1,
        messages: [
          {
            key: message.key,
            value: message.value,
            headers: {
              ...message.headers,
              dlq_reason: reason.slice(0, 1000),
              dlq_error_code: code,
              dlq_source_topic: topic,
              dlq_source_partition: String(partition),
              dlq_source_offset: message.offset,
              dlq_source_timestamp: message.timestamp,
            },
          },
        ],
      });
      opts.onDeadLetter?.(topic, code);
      opts.logger.warn({ sourceTopic: topic, partition, offset: message.offset, code, reason }, 'record sent to DLQ');
    },
  };
}
