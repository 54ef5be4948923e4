/**
 * Finds the first record of a topic carrying a header value (an event's `event_key`), read from
 * the broker's time index at `fromMs` on, beside the live groups (kafka/scan-from-time.ts).
 * Bounded for production: each partition stops at its first match, after `maxRecords` records,
 * or at its high-water mark as it was when the search began. No record's timestamp ends it: a
 * record is stamped when it is sent, which may be any time after what it records (a connector
 * stopped for hours), so only a partition read to its end proves the value absent.
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '../ops/logger';
import { scanFromTime, type ScanRange } from './scan-from-time';

export type FoundRecord = Readonly<{ topic: string; partition: number; offset: string; timestampMs: number }>;

/**
 * What was read: per partition, why it stopped (`limit`: at `maxRecords`, so no proof of absence
 * in it) and the records read.
 */
export type RecordSearch = Readonly<{
  found: FoundRecord | null;
  records: number;
  partitions: ReadonlyArray<{ partition: number; stop: string; records: number }>;
}>;

type Stop = 'found' | 'limit';
type Range = ScanRange<Stop> & { records: number };

export async function findRecordByHeader(opts: {
  kafka: Kafka;
  topic: string;
  header: string;
  value: string;
  fromMs: number;
  maxRecords: number;
  groupId: string;
  /** An abort ends the search, its group deleted (InterruptedError). */
  signal?: AbortSignal;
  logger: Logger;
}): Promise<RecordSearch> {
  let found: FoundRecord | null = null;
  const matches = (m: KafkaMessage) => {
    const v = m.headers?.[opts.header];
    return v !== undefined && String(Array.isArray(v) ? v[0] : v) === opts.value;
  };
  const ranges = await scanFromTime<Stop, Range>({
    kafka: opts.kafka,
    topic: opts.topic,
    readFromMs: opts.fromMs,
    groupId: opts.groupId,
    range: (r) => ({ ...r, records: 0 }),
    onBatch: async (range, messages) => {
      for (const m of messages) {
        if (found !== null) return 'found'; // another partition had it: this one need not read on
        if (range.records >= opts.maxRecords) return 'limit';
        range.records += 1;
        if (matches(m)) {
          found = { topic: opts.topic, partition: range.partition, offset: m.offset, timestampMs: Number(m.timestamp) };
          return 'found';
        }
      }
      return found === null ? undefined : 'found';
    },
    signal: opts.signal,
    what: 'the record search',
    logger: opts.logger,
  });
  return {
    found,
    records: ranges.reduce((n, r) => n + r.records, 0),
    partitions: ranges.map((r) => ({ partition: r.partition, stop: r.stop ?? 'unfinished', records: r.records })),
  };
}
