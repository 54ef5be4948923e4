/**
 * Per-entity order across every relay and loop: which rows of a freshly locked batch may be
 * leased now, and which must wait because an earlier unpublished row of the same entity is
 * outside the batch (leased by another loop and in flight, or being claimed by one right now).
 *
 * Leasing a row only once every earlier row of its entity is published means the row is sent
 * only after Kafka acknowledged the earlier ones: on the entity's partition (key = entity id)
 * the first copy of each event follows outbox order, however many relays run. Rows of one
 * entity inside one batch keep their order by themselves (one loop sends them in id order).
 * A deferred row stays unleased at the head of the outbox and is taken by a later claim.
 */
export type EntityRow = Readonly<{ id: string; entityType: string; entityId: string }>;

export function splitBehindEarlier<T extends EntityRow>(batch: readonly T[], unpublishedBefore: readonly EntityRow[]): { lease: T[]; defer: T[] } {
  const inBatch = new Set(batch.map((r) => r.id));
  // The earliest outside row of each entity: a batch row after it must wait for it.
  const earliestOutside = new Map<string, bigint>();
  for (const row of unpublishedBefore) {
    if (inBatch.has(row.id)) continue;
    const key = entityKey(row);
    const id = BigInt(row.id);
    const known = earliestOutside.get(key);
    if (known === undefined || id < known) earliestOutside.set(key, id);
  }
  const lease: T[] = [];
  const defer: T[] = [];
  for (const row of batch) {
    const earlier = earliestOutside.get(entityKey(row));
    if (earlier !== undefined && earlier < BigInt(row.id)) defer.push(row);
    else lease.push(row);
  }
  return { lease, defer };
}

function entityKey(row: EntityRow): string {
  return `${row.entityType}/${row.entityId}`;
}
