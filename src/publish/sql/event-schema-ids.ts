/**
 * event_schema_ids: the schema id of each event type's schema, saved by `timebucket schemas
 * register` and read by `run` (publish/schema-id-source.ts says why the registry is never called
 * at run time). Keyed by registry, subject and the schema text's SHA-256.
 *
 *   SELECT subject, fingerprint, schema_id FROM event_schema_ids
 *     WHERE registry = ? AND (subject, fingerprint) IN ((?, ?), …)
 *   INSERT INTO event_schema_ids (registry, subject, fingerprint, event_type, schema_id) VALUES (?, ?, ?, ?, ?), …
 *     ON DUPLICATE KEY UPDATE schema_id = VALUES(schema_id), event_type = VALUES(event_type), registered_at = CURRENT_TIMESTAMP(3)
 *
 * Inputs: the main database's pool, the registry's key and the wanted (subject, fingerprint)
 * pairs, or the rows to save. Output: the saved rows found. Safe to re-run: a read, and an upsert
 * (VALUES() reads the same on MySQL 8 and MariaDB) that registering the same schema again repeats.
 */
import type { Knex } from 'knex';

export type SchemaIdKey = Readonly<{ subject: string; fingerprint: string }>;
export type SavedSchemaId = SchemaIdKey & Readonly<{ schemaId: number }>;
export type SchemaIdRow = SavedSchemaId & Readonly<{ eventType: string }>;

export async function readSchemaIdRows(db: Knex, registry: string, wanted: readonly SchemaIdKey[]): Promise<SavedSchemaId[]> {
  if (wanted.length === 0) return [];
  const [rows] = (await db.raw(
    `SELECT subject, fingerprint, schema_id FROM event_schema_ids WHERE registry = ? AND (subject, fingerprint) IN (${wanted.map(() => '(?, ?)').join(', ')})`,
    [registry, ...wanted.flatMap((w) => [w.subject, w.fingerprint])],
  )) as [Array<{ subject: string; fingerprint: string; schema_id: number }>];
  return rows.map((r) => ({ subject: r.subject, fingerprint: r.fingerprint, schemaId: Number(r.schema_id) }));
}

export async function upsertSchemaIdRows(db: Knex, registry: string, rows: readonly SchemaIdRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.raw(
    `INSERT INTO event_schema_ids (registry, subject, fingerprint, event_type, schema_id) VALUES ${rows.map(() => '(?, ?, ?, ?, ?)').join(', ')}
     ON DUPLICATE KEY UPDATE schema_id = VALUES(schema_id), event_type = VALUES(event_type), registered_at = CURRENT_TIMESTAMP(3)`,
    rows.flatMap((r) => [registry, r.subject, r.fingerprint, r.eventType, r.schemaId]),
  );
}
