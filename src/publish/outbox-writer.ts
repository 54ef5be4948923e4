/**
 * Where the expiry transaction writes its events: event_outbox, each event encoded here (Avro,
 * with its schema id), which Debezium's Outbox Event Router publishes from the binlog
 * (publish/outbox-connector-config.ts). An event whose type has no schema id yet holds its transition (retried until
 * `timebucket schemas register` has saved the id); one that can never be published (its schema
 * rejects it, or it is larger than its topic takes) goes to the dead-letter topic with the
 * reason, in the same transaction, and the transition commits. */
import type { Knex } from 'knex';
import type { EventEncoder, EncodedEvent } from './event-encoder';
import { TimebucketError } from '../core/errors';
import { insertEventOutbox } from './sql/insert-event-outbox';
import type { EventPayload } from '../core/events';

/** One transition's event, with the row it is about. */
export type OutboxInsert = Readonly<{ event: EventPayload; entityType: string; entityId: string }>;

/** Writes one transaction's events; returns the rows inserted (INSERT IGNORE: 0 for a replay). */
export type OutboxWriter = (trx: Knex.Transaction, rows: readonly OutboxInsert[]) => Promise<number>;

/** An event that can never be published as it is, with why: for the dead-letter topic. */
export type RejectedEvent = Readonly<{ event: OutboxInsert['event']; entityId: string; code: 'EVENT_REJECTED' | 'EVENT_TOO_LARGE'; reason: string }>;

/**
 * `rejected`: where an event that can never be published goes (the dead-letter topic, within the
 * transaction: if it fails, the transition rolls back and is retried); without it, such an event
 * fails the transaction (an operator's command, which then reports it).
 */
export function eventOutboxWriter(
  encoder: EventEncoder,
  opts: Readonly<{ rejected?: (events: readonly RejectedEvent[]) => Promise<void> }> = {},
): OutboxWriter {
  return async (trx, rows) => {
    const encoded: EncodedEvent[] = [];
    const rejected: RejectedEvent[] = [];
    for (const r of rows) {
      const result = encoder.encode(r.event, r.entityId);
      if (result.ok) encoded.push(result.row);
      else if (result.failure === 'missing-schema-id') {
        // Back-pressure: the transition waits for its schema id (timebucket schemas register).
        throw new TimebucketError('SCHEMA_ID_MISSING', `${result.reason}: run \`timebucket schemas register\`; the transition waits for it`, {
          retriable: true,
          details: { eventType: r.event.event_type },
        });
      } else rejected.push({ event: r.event, entityId: r.entityId, code: result.code, reason: result.reason });
    }
    if (rejected.length > 0) {
      if (opts.rejected === undefined)
        throw new TimebucketError(rejected[0]!.code, `event ${rejected[0]!.event.event_key} cannot be published: ${rejected[0]!.reason}`, {
          details: { eventKey: rejected[0]!.event.event_key },
        });
      await opts.rejected(rejected);
    }
    // A dead-lettered event counts as written: its transition commits, and the event is where the operator finds it.
    return (await insertEventOutbox(trx, encoded)) + rejected.length;
  };
}

/** The writer of a process without the expirer or the scanner: it runs no transitions. */
export const writesNoEvents: OutboxWriter = () => {
  // A programmer's error: only the expirer and the scanner are given batches to run.
  throw new Error('this process runs no transitions (neither the expirer nor the scanner role): it has no event writer');
};
