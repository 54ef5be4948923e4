/**
 * Leases the next unpublished outbox rows to one relay loop and returns them. Inputs: the
 * loop's lease owner id, lease length, batch size. Output: the rows leased, in outbox (id)
 * order, and how many rows were locked but left for later (deferred).
 *
 * One short transaction, so loops and relays claim in parallel instead of taking turns:
 *  1. Lock the first `limit` unpublished rows whose lease is free or expired, walking
 *     idx_outbox_unpublished (published_at, id) in order, FOR UPDATE SKIP LOCKED: rows another
 *     loop is claiming at this moment are skipped, not waited for, and that loop gets them.
 *     (The old single UPDATE … ORDER BY … LIMIT waited on every row a concurrent claim held.)
 *     ORDER BY id, not published_at, id: for a SELECT, MariaDB reads `published_at IS NULL` as
 *     a ref on the index, which yields rows in id order and stops after `limit` of them; given
 *     ORDER BY published_at, id it sorts the whole unpublished range first (the opposite of the
 *     UPDATE it replaces). A test checks the plan.
 *  2. Read the unpublished rows before the last locked one (a plain read, no locks): those not
 *     in this batch are in flight under another lease or being claimed right now. A locked row
 *     whose entity has an earlier one among them is deferred (entity-order.ts): per-entity order.
 *  3. Lease the others to `relayId` until NOW(3) + leaseMs; the commit releases the row locks.
 *
 * Both reads cost the rows in flight (every loop's batch) plus this batch, not the backlog:
 * leased rows sit at the head of the index range and unleased ones follow. Poison rows are not
 * there at all (set-aside-poison.ts moves them to outbox_poison).
 *
 * The database clock decides lease expiry, so relays on skewed hosts agree on it. A loop that
 * dies keeps its rows only until claim_until; the next claim after that takes them over.
 * Safe to re-run: it only takes rows that are unpublished and unleased (or whose lease expired).
 */
import type { Knex } from 'knex';
import { bigintString } from '../../db/bigint-string';
import { splitBehindEarlier } from '../entity-order';
import { OUTBOX_ROW_COLUMNS, OutboxRow, OutboxRowRecord, toOutboxRow } from './outbox-row';

export type ClaimedBatch = Readonly<{ rows: readonly OutboxRow[]; deferred: number }>;

/** Step 1 (EXPLAIN checks its plan in tests); binding: limit. */
export const LOCK_NEXT_UNPUBLISHED_SQL = `SELECT ${OUTBOX_ROW_COLUMNS} FROM outbox FORCE INDEX (idx_outbox_unpublished)
  WHERE published_at IS NULL AND (claim_until IS NULL OR claim_until < NOW(3))
  ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`;

/** Step 2 (EXPLAIN checks its plan in tests); binding: the last locked id. */
export const UNPUBLISHED_BEFORE_SQL = `SELECT id, entity_type, entity_id FROM outbox FORCE INDEX (idx_outbox_unpublished)
  WHERE published_at IS NULL AND id < ?`;

export async function claimOutboxBatch(db: Knex, relayId: string, leaseMs: number, limit: number): Promise<ClaimedBatch> {
  return db.transaction(async (trx) => {
    const [locked] = (await trx.raw(LOCK_NEXT_UNPUBLISHED_SQL, [limit])) as [OutboxRowRecord[]];
    const rows = locked.map(toOutboxRow);
    const last = rows[rows.length - 1];
    if (last === undefined) return { rows: [], deferred: 0 };
    const [before] = (await trx.raw(UNPUBLISHED_BEFORE_SQL, [last.id])) as [Array<{ id: number | string; entity_type: string; entity_id: number | string }>];
    const { lease, defer } = splitBehindEarlier(
      rows,
      before.map((r) => ({ id: bigintString(r.id, 'outbox.id'), entityType: r.entity_type, entityId: bigintString(r.entity_id, 'outbox.entity_id') })),
    );
    if (lease.length > 0) {
      await trx.raw('UPDATE outbox SET claimed_by = ?, claim_until = NOW(3) + INTERVAL ? MICROSECOND WHERE id IN (?)', [
        relayId,
        Math.round(leaseMs * 1000),
        lease.map((r) => r.id),
      ]);
    }
    return { rows: lease, deferred: defer.length };
  });
}
