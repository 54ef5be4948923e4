/**
 * Parking an entry the expirer cannot finish: its bucket record goes to the DLQ with the reason
 * (code EXPIRY_PARKED), from where an operator redrives it once the cause is fixed (produce the
 * record back to its source topic; the expiry is idempotent). The record is rebuilt from the
 * entry: same key (shard), value and bucket_start as the original, and its source coordinates.
 * The value is encoded against the catalogue (v1 bytes for an entity's first transition, as the
 * original was written), so a redriven entry decodes exactly as it did.
 */
import type { KafkaMessage } from 'kafkajs';
import { encodeBucketEntry } from '../core/bucket-entry-codec';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { ExpiryParkedError } from '../core/errors';
import type { DlqWriter } from '../kafka/dlq-writer';
import type { HeldMessage } from './hold-consumer';
import type { Park } from './expirer-sink';

export function parkToDlq(dlq: DlqWriter, attempts: number, catalogue: EntityCatalogue): Park {
  return (msg: HeldMessage, err: unknown) => {
    const headers: Record<string, string> = msg.releaseAtMs === 0 ? { tier: 'due' } : { bucket_start: String(msg.bucketStartMs) };
    const message = {
      key: Buffer.from(String(msg.shard)),
      value: encodeBucketEntry(msg.entry, catalogue),
      headers,
      offset: msg.offset,
      timestamp: '',
      attributes: 0,
    } as unknown as KafkaMessage;
    return dlq.send({ topic: msg.topic, partition: msg.partition, message, error: new ExpiryParkedError(attempts, err) });
  };
}
