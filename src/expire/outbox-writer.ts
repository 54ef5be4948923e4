/**
 * Where the expiry transaction writes its events (config.publish.mode):
 *   relay   the JSON outbox, which the polling relay encodes and sends (publish/outbox-relay.ts);
 *   router  event_outbox, each event encoded here, which Debezium's Outbox Event Router
 *           publishes from the binlog (publish/outbox-connector-config.ts).
 * In router mode an event that cannot be encoded yet (its schema id unknown while the registry
 * is down at a first start) or at all (its schema rejects it) goes to the JSON outbox, in the
 * same transaction: the relay publishes it once the registry answers, or sets it aside as
 * poison, named. Either way the transition commits.
 */
import type { Knex } from 'knex';
import type { EventEncoder, EncodedEvent } from '../publish/event-encoder';
import { insertEventOutbox } from './sql/insert-event-outbox';
import { insertOutbox, type OutboxInsert } from './sql/insert-outbox';

/** Writes one transaction's events; returns the rows inserted (INSERT IGNORE: 0 for a replay). */
export type OutboxWriter = (trx: Knex.Transaction, rows: readonly OutboxInsert[]) => Promise<number>;

export const relayOutbox: OutboxWriter = insertOutbox;

export function routerOutbox(encoder: EventEncoder, observer?: Readonly<{ deferred?: (rows: number) => void }>): OutboxWriter {
  return async (trx, rows) => {
    const encoded: EncodedEvent[] = [];
    const deferred: OutboxInsert[] = [];
    for (const r of rows) {
      const result = encoder.encode(r.event, r.entityId);
      if (result.ok) encoded.push(result.row);
      else deferred.push(r);
    }
    const inserted = await insertEventOutbox(trx, encoded);
    const relayed = deferred.length === 0 ? 0 : await insertOutbox(trx, deferred);
    if (deferred.length > 0) observer?.deferred?.(deferred.length);
    return inserted + relayed;
  };
}
