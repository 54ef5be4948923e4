/**
 * Splits one cycle's messages into produce requests: per topic, in outbox order, each request
 * under a byte budget.
 *
 * Why bytes: the broker refuses a record batch larger than message.max.bytes (per topic:
 * max.message.bytes), 1 MiB by default, and kafkajs writes each partition's share of one send()
 * as one record batch. A whole send under the budget keeps every partition's batch under it,
 * whatever the partitioner does. The relay used to send at most 500 messages at a time, a count
 * standing in for bytes (~500-byte events); bytes let a batch of small events go in fewer,
 * larger requests, and a batch of large ones still stay under the limit.
 */
import type { Message } from 'kafkajs';

/** Three quarters of the broker's default limit: room for a topic configured somewhat lower. */
export const DEFAULT_MAX_SEND_BYTES = 768 * 1024;

// A record in a v2 batch: length, attributes, timestamp and offset deltas, key and value
// lengths, header count as varints (at most 41 bytes together), each header two more (≤ 10).
const RECORD_OVERHEAD_BYTES = 41;
const HEADER_OVERHEAD_BYTES = 10;

/** An upper bound of the bytes `message` takes in a record batch. */
export function recordBytes(message: Pick<Message, 'key' | 'value' | 'headers'>): number {
  let bytes = RECORD_OVERHEAD_BYTES + byteLength(message.key) + byteLength(message.value);
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) bytes += HEADER_OVERHEAD_BYTES + Buffer.byteLength(name) + byteLength(v);
  }
  return bytes;
}

export type SendChunk<T> = Readonly<{ topic: string; items: T[] }>;

/**
 * Chunks in the order of each topic's first item, items in their given order. A single item
 * over the budget gets a chunk of its own (the broker decides; nothing is dropped here).
 */
export function sendChunks<T extends Readonly<{ topic: string; message: Message }>>(items: readonly T[], maxBytes: number): Array<SendChunk<T>> {
  const byTopic = new Map<string, T[]>();
  for (const item of items) {
    const group = byTopic.get(item.topic);
    if (group) group.push(item);
    else byTopic.set(item.topic, [item]);
  }
  const chunks: Array<SendChunk<T>> = [];
  for (const [topic, group] of byTopic) {
    let current: T[] = [];
    let bytes = 0;
    for (const item of group) {
      const size = recordBytes(item.message);
      if (current.length > 0 && bytes + size > maxBytes) {
        chunks.push({ topic, items: current });
        current = [];
        bytes = 0;
      }
      current.push(item);
      bytes += size;
    }
    if (current.length > 0) chunks.push({ topic, items: current });
  }
  return chunks;
}

function byteLength(value: Buffer | string | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}
