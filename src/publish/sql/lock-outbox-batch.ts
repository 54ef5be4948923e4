/**
 * Locks the next unpublished outbox rows for one relay loop, inside the loop's own transaction,
 * and returns those it may send now. Inputs: the transaction, the batch size. Output: the rows
 * to send, in outbox (id) order, and how many were locked but left for later (deferred).
 *
 * The row locks are the lease: the loop keeps its transaction open while it sends the batch,
 * marks the acknowledged rows published in the same transaction, and the commit releases
 * everything it did not publish. So a published row is written once (published_at), where a
 * lease written as columns cost a second UPDATE of every row, and its binlog images, before
 * the send. A loop that dies loses its locks with its connection at once; one that stalls is cut
 * off by the database after its lease (idle_transaction_timeout on MariaDB, wait_timeout on MySQL).
 *
 *  1. Lock the first `limit` unpublished rows, walking idx_outbox_unpublished (published_at, id)
 *     in order, FOR UPDATE SKIP LOCKED: rows another loop holds are skipped, never waited for.
 *     ORDER BY id, not published_at, id: for a SELECT, MariaDB reads `published_at IS NULL` as a
 *     ref on the index, which yields rows in id order and stops after `limit` of them; given
 *     ORDER BY published_at, id it sorts the whole unpublished range first. A test checks the plan.
 *  2. Read the unpublished rows before the last locked one (a plain read, no locks): those not in
 *     this batch are held by another loop right now. A locked row whose entity has an earlier one
 *     among them is deferred (entity-order.ts): per-entity order across loops and relays.
 *
 * Both reads cost the rows in flight (every loop's batch) plus this batch, not the backlog.
 * Poison rows are not there at all (set-aside-poison.ts moves them to outbox_poison).
 * Rows leased by a relay of an earlier version (claim_until, during a rolling upgrade) are not
 * waited for: at worst such a row is published twice, which subscribers absorb by event_key.
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';
import { splitBehindEarlier } from '../entity-order';
import { OUTBOX_ROW_COLUMNS, OutboxRow, OutboxRowRecord, toOutboxRow } from './outbox-row';

export type LockedBatch = Readonly<{ rows: readonly OutboxRow[]; deferred: number }>;

/** Step 1 (EXPLAIN checks its plan in tests); binding: limit. */
export const LOCK_NEXT_UNPUBLISHED_SQL = `SELECT ${OUTBOX_ROW_COLUMNS} FROM outbox FORCE INDEX (idx_outbox_unpublished)
  WHERE published_at IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`;

/** Step 2 (EXPLAIN checks its plan in tests); binding: the last locked id. */
export const UNPUBLISHED_BEFORE_SQL = `SELECT id, entity_type, entity_id FROM outbox FORCE INDEX (idx_outbox_unpublished)
  WHERE published_at IS NULL AND id < ?`;

export async function lockOutboxBatch(trx: Knex.Transaction, limit: number): Promise<LockedBatch> {
  const [locked] = (await trx.raw(LOCK_NEXT_UNPUBLISHED_SQL, [limit])) as [OutboxRowRecord[]];
  const rows = locked.map(toOutboxRow);
  const last = rows[rows.length - 1];
  if (last === undefined) return { rows: [], deferred: 0 };
  const [before] = (await trx.raw(UNPUBLISHED_BEFORE_SQL, [last.id])) as [Array<{ id: number | string; entity_type: string; entity_id: number | string }>];
  const { lease, defer } = splitBehindEarlier(
    rows,
    before.map((r) => ({ id: bigintString(r.id, 'outbox.id'), entityType: r.entity_type, entityId: bigintString(r.entity_id, 'outbox.entity_id') })),
  );
  return { rows: lease, deferred: defer.length };
}

/**
 * The session variable that cuts off an idle connection holding a transaction. MariaDB has
 * idle_transaction_timeout, which spares idle connections outside a transaction; MySQL 8 has no
 * such variable, and wait_timeout (on both) ends the idle connection, and with it the
 * transaction, the same way while the loop awaits Kafka. Chosen by the server's flavour.
 */
export type IdleHoldVariable = 'idle_transaction_timeout' | 'wait_timeout';

export function idleHoldVariableOf(flavour: 'mariadb' | 'mysql'): IdleHoldVariable {
  return flavour === 'mariadb' ? 'idle_transaction_timeout' : 'wait_timeout';
}

/**
 * Bounds how long the loop's transaction may sit idle (a send in flight) before the database
 * ends it, rolling back and freeing the batch for other loops: the lease, enforced by the
 * server, whatever happens to the process. Whole seconds (the variable's unit), at least 1;
 * DEFAULT restores the server's value before the connection goes back to the pool.
 */
export async function limitIdleHold(trx: Knex.Transaction, leaseMs: number | 'DEFAULT', variable: IdleHoldVariable = 'idle_transaction_timeout'): Promise<void> {
  await trx.raw(`SET SESSION ${variable} = ${leaseMs === 'DEFAULT' ? 'DEFAULT' : Math.max(1, Math.ceil(leaseMs / 1000))}`);
}
