/**
 * Leases a batch of unpublished outbox rows to one relay. Inputs: relay id, lease length,
 * batch size. Output: rows claimed.
 *
 * A lease, not a lock: a single autocommit UPDATE, so no transaction is held open while the
 * relay talks to Kafka. InnoDB re-reads rows another relay is claiming concurrently after that
 * relay commits, and then skips them (their claim_until is in the future), so in normal
 * operation several relays never publish the same row. A relay that dies keeps its rows only
 * until claim_until; the next claim after that takes them over. Rows set aside as poison
 * carry a claim_until of 9999-12-31 and are never taken again.
 *
 * ORDER BY published_at, id (not just id): only the full index prefix lets MariaDB walk
 * idx_outbox_unpublished in order and stop after `limit` rows; ORDER BY id alone makes the
 * UPDATE read and sort every unpublished row (a million-row backlog took seconds per claim).
 *
 * Safe to re-run: it only ever takes rows that are unpublished and unleased (or whose lease
 * expired); the database clock decides expiry, so relays on skewed hosts agree on it.
 */
import type { Knex } from 'knex';

export async function claimOutboxBatch(db: Knex, relayId: string, leaseMs: number, limit: number): Promise<number> {
  const [result] = (await db.raw(
    `UPDATE outbox SET claimed_by = ?, claim_until = NOW(3) + INTERVAL ? MICROSECOND
      WHERE published_at IS NULL AND (claim_until IS NULL OR claim_until < NOW(3))
      ORDER BY published_at, id LIMIT ?`,
    [relayId, Math.round(leaseMs * 1000), limit],
  )) as [{ affectedRows: number }];
  return result.affectedRows;
}
