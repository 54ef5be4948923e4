/**
 * What the running service may do in its database, and nothing more. Migrations run as an owner
 * user; `timebucket migrate` with TB_DB_SERVICE_USER set then grants that user exactly this, and
 * revokes what an earlier entities file needed and this one does not (db/apply-service-grants.ts).
 *
 * On a mapped table every privilege is a column's (core/entity-catalogue.ts names the columns):
 *   SELECT  the columns some statement of the service reads: the id, the status, each due
 *           column; per transition its event's columns the locking read returns
 *           (core/events.ts eventColumns), the columns it increments (`v = v + 1` reads v) or
 *           assigns a constant (replay's `col <=> ?` tells done from stale), its reminders' and
 *           digest's event columns and the digest's user column (the digest's read and
 *           backfill's pages); per effect on the entity, the column holding the other row's id
 *           and the columns it increments
 *   UPDATE  the status, the columns a transition or an effect assigns, and the columns the
 *           server updates itself on every update (ON UPDATE CURRENT_TIMESTAMP)
 * Any other column (a name, an e-mail, an address) stays unreadable: SELECT * and SELECT of it
 * are refused. A column a `now` assignment writes is not read: its value is the transaction's clock.
 *
 * The list follows the statements under src/expire/sql, src/reconcile/sql, src/replay/sql and src/publish/sql:
 * test/integration/db/service-grants.test.ts runs each of them as the service account, so a
 * statement that needs more fails there first.
 */
import type { SchemaInfo } from '../core/column-info';
import { MAIN_DATABASE, type Assignment, type Entity, type EntityCatalogue } from '../core/entity-catalogue';
import { eventColumns } from '../core/events';

/** `privileges`: on the whole table; `selectColumns`, `updateColumns`: on those columns only. */
export type TableGrant = Readonly<{ table: string; privileges: readonly string[]; selectColumns?: readonly string[]; updateColumns?: readonly string[] }>;

/** timebucket's own tables. */
export const OWN_TABLE_GRANTS: readonly TableGrant[] = [
  // The expirer and the scanner insert, the capture probe too (the connector reads the binlog,
  // not the table); retention deletes.
  { table: 'event_outbox', privileges: ['SELECT', 'INSERT', 'DELETE'] },
  // `timebucket schemas register` saves the ids it registered (an upsert); `run` reads them.
  { table: 'event_schema_ids', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { table: 'scanner_cursors', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { table: 'control_switches', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  // The expirer's heartbeat, an upsert of its own row (db/sql/write-heartbeat.ts) that reads nothing.
  { table: 'timebucket_heartbeat', privileges: ['INSERT', 'UPDATE'] },
  // The pacers' state for `ctl status` (control/sql/pacer-state-store.ts): upserted, read, and
  // deleted by the instance that wrote it when it stops.
  { table: 'pacer_state', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
];

/**
 * Global privileges an operator may grant for an optional signal, not counted by `check` or
 * `migrate` as wider than needed while that signal is in use. PROCESS: MySQL needs it to read
 * InnoDB's history list length (information_schema.INNODB_METRICS) for the expirer's pacer
 * (docs/operations.md, Pacing per database); MariaDB reads it from a status variable without.
 * `migrate` never grants it.
 */
export function optionalGlobalGrants(pacing: Readonly<{ enabled: boolean }>): readonly string[] {
  return pacing.enabled ? ['PROCESS'] : [];
}

type EntityColumns = { read: Set<string>; write: Set<string> };

/** Per entity, the columns the service's statements read and write (the header's list). */
export function entityColumns(catalogue: EntityCatalogue): ReadonlyMap<string, EntityColumns> {
  const out = new Map<string, EntityColumns>(
    catalogue.entities.map((e: Entity) => [e.name, { read: new Set([e.idColumn, e.status.column]), write: new Set([e.status.column]) }]),
  );
  const readsOf = (set: readonly Assignment[], withValues: boolean) =>
    set.filter((a) => a.kind === 'increment' || (withValues && a.kind === 'value')).map((a) => a.column);
  const columnFields = (fields: ReadonlyArray<{ source: string; column?: string }>) =>
    fields.flatMap((f) => (f.source === 'column' && f.column !== undefined ? [f.column] : []));
  for (const t of catalogue.transitions) {
    const own = out.get(t.entity)!;
    own.read.add(t.due.column);
    for (const c of [...eventColumns(t), ...readsOf(t.set, true)]) own.read.add(c);
    for (const a of t.set) own.write.add(a.column);
    const r = t.reminders;
    for (const c of columnFields(r?.event?.fields ?? [])) own.read.add(c);
    if (r?.digest) for (const c of [r.digest.userColumn, ...columnFields(r.digest.event.fields)]) own.read.add(c);
    for (const fx of t.effects) {
      const other = out.get(fx.entity)!;
      for (const c of [fx.column, ...readsOf(fx.set, false)]) other.read.add(c);
      for (const a of fx.set) other.write.add(a.column);
    }
  }
  return out;
}

/**
 * The mapped tables of `database` (every table of a set): SELECT and UPDATE of the columns
 * above. `schema`: keyed by location (db/check-entity-schema.ts), for the server-updated columns.
 */
export function mappedTableGrants(catalogue: EntityCatalogue, schema: SchemaInfo, database: string = MAIN_DATABASE): TableGrant[] {
  const columns = entityColumns(catalogue);
  return catalogue.entities.flatMap((e) =>
    e.locations
      .filter((l) => l.database === database)
      .map((l) => {
        const { read, write } = columns.get(e.name)!;
        const update = new Set(write);
        for (const c of schema.get(l.key)?.columns.values() ?? []) if (c.autoUpdated === true) update.add(c.name);
        return { table: l.table, privileges: [], selectColumns: [...read], updateColumns: [...update] };
      }),
  );
}

/** A user as MySQL names it: 'name'@'host'. */
export type DbAccount = Readonly<{ user: string; host: string }>;

/** Everything the service needs on `database`: its mapped tables, then timebucket's own. */
export function neededGrants(catalogue: EntityCatalogue, schema: SchemaInfo, database: string = MAIN_DATABASE): TableGrant[] {
  return [...mappedTableGrants(catalogue, schema, database), ...OWN_TABLE_GRANTS];
}
