/**
 * Entities files the integration tests write their own tables for: a `pass` that closes at its
 * due time (DATETIME), and a seed-style wallet (Chinese states, epoch-millisecond columns) whose
 * expired and used rows are archived by `updated_ms`. Each test adds what it is about.
 */

/** The `pass` entity on `passes`: OPEN → CLOSED at close_at, closed_at stamped; `extra` on the entity. */
export function passEntity(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'pass',
    table: 'passes',
    id: 'id',
    status: { column: 'status', type: 'string', values: ['OPEN', 'CLOSED'] },
    transitions: [
      {
        name: 'closed',
        from: ['OPEN'],
        to: 'CLOSED',
        due: { column: 'close_at', kind: 'datetime' },
        index: 'idx_passes_status_close_id',
        set: { closed_at: { now: 'datetime' } },
        event: { type: 'PASS_CLOSED', ceType: 'test.pass.closed', avroName: 'test.events.PassClosed', idField: 'pass_id', summary: 'A pass closed.' },
      },
    ],
    ...extra,
  };
}

/**
 * A wallet entity `name` on `table` (a table or a set), 待使用 → 已过期 at expire_at_ms, archiving
 * 已过期 and 已使用 by updated_ms through idx_status_updated into `{table}_archive`; `archive`
 * overrides fields of the archive.
 */
export function archivingWalletFile(name: string, table: string, archive: Record<string, unknown> = {}): { entities: Array<Record<string, unknown>> } {
  const type = name.toUpperCase();
  return {
    entities: [
      {
        name,
        table,
        id: 'id',
        status: { column: 'status', type: 'string', values: ['待使用', '已使用', '已过期'] },
        transitions: [
          {
            name: 'expired',
            from: ['待使用'],
            to: '已过期',
            due: { column: 'expire_at_ms', kind: 'epoch_ms' },
            index: 'idx_status_expire',
            set: { updated_ms: { now: 'epoch_ms' } },
            event: { type: `${type}_EXPIRED`, ceType: `shop.${name}.expired`, avroName: `shop.${name}.Expired`, idField: `${name}_id`, summary: 'expired' },
          },
        ],
        archive: {
          finalStates: ['已过期', '已使用'],
          since: { column: 'updated_ms', kind: 'epoch_ms' },
          table: '{table}_archive',
          index: 'idx_status_updated',
          ...archive,
        },
      },
    ],
  };
}
