/**
 * Finds the first record of a topic carrying a header value (an event's `event_key`), read from
 * the broker's time index at `fromMs` on, beside the live groups (kafka/scan-from-time.ts).
 * Bounded for production: each partition stops at its first match, at a record stamped after
 * `untilMs`, after `maxRecords` records, or at its high-water mark.
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '../ops/logger';
import { scanFromTime, type ScanRange } from './scan-from-time';

export type FoundRecord = Readonly<{ topic: string; partition: number; offset: string; timestampMs: number }>;

/** What was read, when nothing matched: a bounded look is no proof of absence past its bounds. */
export type RecordSearch = Readonly<{ found: FoundRecord | null; records: number; stops: readonly string[] }>;

type Stop = 'found' | 'past-window' | 'limit';
type Range = ScanRange<Stop> & { records: number };

export async function findRecordByHeader(opts: {
  kafka: Kafka;
  topic: string;
  header: string;
  value: string;
  fromMs: number;
  untilMs: number;
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
        if (Number(m.timestamp) > opts.untilMs) return 'past-window';
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
  return { found, records: ranges.reduce((n, r) => n + r.records, 0), stops: ranges.map((r) => `${r.partition}:${r.stop ?? 'unfinished'}`) };
}
