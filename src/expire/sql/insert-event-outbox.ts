/**
 * One event_outbox row per transition, the event already encoded (publish/event-encoder.ts).
 * Inputs: the encoded events. Output: rows inserted.
 *
 *   INSERT IGNORE INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload)
 *     VALUES (?, ?, ?, ?, ?, ?, ?, ?), …
 *
 * Safe to re-run: INSERT IGNORE on the unique event_key, so a replayed batch adds nothing
 * (invariant I4). The connector publishes what the binlog holds; no row is ever updated.
 */
import type { Knex } from 'knex';
import type { EncodedEvent } from '../../publish/event-encoder';

const COLUMNS = 8;
/** The statement for n rows, built once per n (batches are mostly of one size). */
const statements = new Map<number, string>();

function statementFor(n: number): string {
  let sql = statements.get(n);
  if (sql === undefined) {
    sql = `INSERT IGNORE INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload) VALUES ${Array.from({ length: n }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`;
    if (statements.size < 64) statements.set(n, sql);
  }
  return sql;
}

export async function insertEventOutbox(trx: Knex.Transaction, rows: readonly EncodedEvent[]): Promise<number> {
  if (rows.length === 0) return 0;
  const values: unknown[] = new Array(rows.length * COLUMNS);
  let i = 0;
  for (const r of rows) {
    values[i++] = r.eventKey;
    values[i++] = r.topic;
    values[i++] = r.entityId;
    values[i++] = r.eventType;
    values[i++] = r.ceType;
    values[i++] = r.ceTime;
    values[i++] = r.dataSchema;
    values[i++] = r.payload;
  }
  const [result] = (await trx.raw(statementFor(rows.length), values as Knex.RawBinding[])) as [{ affectedRows: number }];
  return result.affectedRows;
}
