/**
 * One event_outbox row per transition, the event already encoded (publish/event-encoder.ts).
 * Inputs: the encoded events. Output: rows inserted.
 *
 *   INSERT IGNORE INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload)
 *     VALUES (?, ?, ?, ?, ?, ?, ?, ?), …
 *
 * Safe to re-run: INSERT IGNORE on the unique event_key, so a replayed batch adds nothing
 * (invariant I4). The connector publishes what the binlog holds; no row is ever updated.
 *
 * A prepared statement (mysql2's execute, on the transaction's own connection): a batch of
 * 2,000 events is 16,000 values, and as text each was expanded by knex, escaped by mysql2 (the
 * Avro payloads as hex, twice their size) and parsed again by the server; binary parameters
 * skip all three. mysql2 keeps the statements it prepared per connection, the least recently
 * used closed beyond `maxPreparedStatements` (db/knex.ts), so the server's count stays bounded
 * (MySQL's and MariaDB's max_prepared_stmt_count is per server).
 */
import type { Knex } from 'knex';
import type { EncodedEvent } from '../event-encoder';

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
  const sql = statementFor(rows.length);
  const connection = await preparingConnectionOf(trx);
  if (connection === undefined) {
    const [result] = (await trx.raw(sql, values as Knex.RawBinding[])) as [{ affectedRows: number }];
    return result.affectedRows;
  }
  return new Promise((resolve, reject) => {
    connection.execute(sql, values, (err, result) => (err ? reject(err) : resolve((result as { affectedRows: number }).affectedRows)));
  });
}

type PreparingConnection = { execute(sql: string, values: unknown[], cb: (err: Error | null, result: unknown) => void): void };

/**
 * The mysql2 connection a knex transaction runs on: knex's transaction client hands out that one
 * connection (and nothing else runs on it while this statement does: the transaction's
 * statements are sequential). A stand-in transaction without one (a unit test's) gets text.
 */
async function preparingConnectionOf(trx: Knex.Transaction): Promise<PreparingConnection | undefined> {
  const client = (trx as Partial<Pick<Knex.Transaction, 'client'>>).client as { acquireConnection?: () => Promise<unknown> } | undefined;
  if (typeof client?.acquireConnection !== 'function') return undefined;
  const connection = (await client.acquireConnection()) as Partial<PreparingConnection> | undefined;
  return typeof connection?.execute === 'function' ? (connection as PreparingConnection) : undefined;
}
