/**
 * The dead-letter queue: a record that cannot be decoded or is invalid is copied to the DLQ
 * topic with the reason and its source coordinates in headers, counted, and the partition
 * moves on (invariant I5: bad input never blocks). The original key and headers are kept.
 *
 * Many at once go in as few sends as message.max.bytes allows: a poison storm (a schema change
 * upstream, a bad deploy) must cost about what the good records would, not one round trip each.
 */
import { Partitioners, type KafkaMessage, type Message, type PartitionMetadata, type Producer } from 'kafkajs';
import { TimebucketError, type ErrorCode } from '../core/errors';
import type { Logger } from '../ops/logger';

export type DlqRecord = Readonly<{ topic: string; partition: number; message: KafkaMessage; error: unknown }>;

export interface DlqWriter {
  send(record: DlqRecord): Promise<void>;
  sendAll(records: readonly DlqRecord[]): Promise<void>;
}

// Sends stay well under the broker's 1 MB message.max.bytes whatever the source records hold.
const maxSendBytes = 512 * 1024;

export type DlqWriterOptions = Readonly<{
  producer: Pick<Producer, 'send'>;
  topic: string;
  logger: Logger;
  /**
   * The code of a failure that is not one of ours (a library's, a bug's): the stage's own
   * "could not read this record" (CDC_UNDECODABLE for CDC records, BUCKET_INVALID for bucket
   * records), so every dead letter carries a listed code and its series exists from the start.
   */
  otherCode: ErrorCode;
  onDeadLetter?: (sourceTopic: string, code: ErrorCode) => void;
  /**
   * The DLQ topic's partitions (the topology's). Given, each message is placed explicitly where
   * the client's hash would place it, so a send's acknowledgement is checked per partition
   * (kafka/acknowledged.ts): a dead letter kafkajs skipped is sent again, not lost.
   */
  partitions?: number;
}>;

type DeadLetter = { message: Message; code: ErrorCode; reason: string };

export function createDlqWriter(opts: DlqWriterOptions): DlqWriter {
  const placed = placement(opts.topic, opts.partitions);
  const sendAll = async (records: readonly DlqRecord[]): Promise<void> => {
    const converted = records.map((r) => deadLetterOf(r, opts.otherCode));
    for (const chunk of chunksBySize(converted)) {
      await opts.producer.send({ topic: opts.topic, acks: -1, messages: chunk.map((c) => placed(c.message)) });
    }
    converted.forEach((c, i) => opts.onDeadLetter?.(records[i]!.topic, c.code));
    logDeadLetters(opts.logger, records, converted);
  };
  return { send: (record) => sendAll([record]), sendAll };
}

/** Each message placed where the client's hash would place it, when the partitions are given. */
function placement(topic: string, partitions: number | undefined): (message: Message) => Message {
  if (partitions === undefined) return (message) => message;
  const place = Partitioners.DefaultPartitioner();
  const partitionMetadata: PartitionMetadata[] = Array.from({ length: partitions }, (_, i) => ({
    partitionId: i,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [0],
    isr: [0],
  }));
  return (message) => ({ ...message, partition: place({ topic, partitionMetadata, message }) });
}

/** The source record with its key and headers, plus the reason, its code and where it came from. */
function deadLetterOf({ topic, partition, message, error }: DlqRecord, otherCode: ErrorCode): DeadLetter {
  const code = error instanceof TimebucketError ? error.code : otherCode;
  const reason = error instanceof Error ? error.message : String(error);
  return {
    code,
    reason,
    message: {
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
  };
}

/** One line per record below a burst, a summary above it: a storm must not flood the logs. */
function logDeadLetters(logger: Logger, records: readonly DlqRecord[], converted: readonly DeadLetter[]): void {
  if (records.length <= 10) {
    converted.forEach((c, i) => {
      const { topic, partition, message } = records[i]!;
      logger.warn({ sourceTopic: topic, partition, offset: message.offset, code: c.code, reason: c.reason }, 'record sent to DLQ');
    });
    return;
  }
  const first = records[0]!;
  logger.warn(
    {
      sourceTopic: first.topic,
      partition: first.partition,
      records: records.length,
      firstOffset: first.message.offset,
      code: converted[0]!.code,
      reason: converted[0]!.reason,
    },
    'records sent to DLQ',
  );
}

function chunksBySize<T extends { message: Message }>(items: readonly T[]): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item.message.value) + sizeOf(item.message.key) + 512;
    if (current.length > 0 && bytes + size > maxSendBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function sizeOf(v: Message['value'] | Message['key']): number {
  return v === null || v === undefined ? 0 : v.length;
}
