/**
 * A change's row values as the catalogue types them: the entity's status, its id, a transition's
 * due instant. Each names the field it could not read in a CdcInvalidError (the caller's record
 * goes to the DLQ, I5). Read by core/bucket-entry.ts when it plans the entries of a change.
 *
 * Pure: no clock, no I/O.
 */
import type { CdcChange, CdcRow } from './cdc-envelope';
import { decodeDebeziumInstant, MAX_ABS_MS } from './debezium-time';
import type { Entity, StatusValue, Transition } from './entity-catalogue';
import { describe, isDecimalId, MAX_BIGINT_UNSIGNED, typeName } from './field-checks';
import { CdcInvalidError } from './errors';

/**
 * The status as the file types it. An integer column arrives as a JSON number (int8..int64), a
 * bigint only beyond 2^53: no value the file can name (they fit 32 bits), so it is in no
 * from-state, and not one of the values when the file lists them.
 */
export function statusOf(entity: Entity, row: CdcRow, image: string): StatusValue | bigint {
  const { column, type, values } = entity.status;
  const status = row[column];
  const field = `${image}.${column}`;
  if (type === 'string' && typeof status !== 'string')
    throw new CdcInvalidError(`${field}: expected a string, got ${typeName(status)}`, { entity: entity.name });
  if (type === 'integer' && !(typeof status === 'bigint' || (typeof status === 'number' && Number.isSafeInteger(status)))) {
    throw new CdcInvalidError(`${field}: expected an integer, got ${describe(status)}`, { entity: entity.name });
  }
  const value = status as StatusValue | bigint;
  // Listed values are every state the table allows: anything else is corrupt data, not "not live".
  if (values !== null && !values.some((v) => v === value)) {
    throw new CdcInvalidError(`${field}: unknown ${entity.name} state ${describe(value)}`, { entity: entity.name });
  }
  return value;
}

/**
 * BIGINT UNSIGNED ids, exact: a safe JS number, a bigint (decodeCdcValue's form of an integer
 * beyond 2^53) or a canonical decimal string, in 1..2^64-1. A JS number beyond 2^53 is refused:
 * it may already be rounded, and a rounded id names another row.
 * A plain int64 column has no schema name; a named one (Connect Decimal, from
 * bigint.unsigned.handling.mode=precise) is base64 bytes, and "1234" is valid base64 too, so
 * reading it as decimal could silently schedule the wrong row. Rejected instead.
 */
export function idOf(entity: Entity, row: CdcRow, change: CdcChange): string {
  const column = entity.idColumn;
  const schema = change.fieldSchemas[column];
  if (schema !== undefined) throw new CdcInvalidError(`after.${column}: unsupported Connect schema ${JSON.stringify(schema)}`);
  const id = row[column];
  if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return String(id);
  if (typeof id === 'bigint' && id > 0n && id <= MAX_BIGINT_UNSIGNED) return String(id);
  if (typeof id === 'string' && isDecimalId(id)) return id;
  throw new CdcInvalidError(`after.${column}: expected a positive integer within BIGINT UNSIGNED (exact) or its decimal string, got ${describe(id)}`);
}

/** The due instant in epoch ms, or null when the column is NULL (no deadline). */
export function dueOf(t: Transition, row: CdcRow, change: CdcChange, image: string): number | null {
  const { column, kind } = t.due;
  const field = `${image}.${column}`;
  if (!Object.hasOwn(row, column) || row[column] === undefined) throw new CdcInvalidError(`${field}: missing`);
  const raw = row[column];
  if (raw === null) return null;
  let ms: number;
  try {
    ms = kind === 'datetime' ? datetimeMs(raw, change.fieldSchemas[column]) : epochMs(raw, kind === 'epoch_s' ? 1000 : 1, change.fieldSchemas[column]);
  } catch (err) {
    if (!(err instanceof CdcInvalidError)) throw err;
    throw new CdcInvalidError(`${field}: ${err.message}`, err.details);
  }
  // Entries carry non-negative times (see the wire format); no real deadline precedes 1970.
  if (ms < 0) throw new CdcInvalidError(`${field}: before 1970 (${ms} ms)`, { value: raw });
  return ms;
}

function datetimeMs(raw: unknown, schemaName: string | undefined): number {
  // A bigint here is an integer beyond 2^53: a NanoTimestamp (anything else is out of range).
  // decodeDebeziumInstant takes the double JSON.parse used to give (Number() rounds the same
  // way) and floors it to ms, as before.
  return decodeDebeziumInstant(typeof raw === 'bigint' ? Number(raw) : raw, schemaName);
}

/**
 * An integer column holding epoch ms or s: a JSON number (a bigint beyond 2^53, out of range for
 * either unit). A Connect schema name means the column is not a plain integer (a temporal type,
 * whose unit the name gives and this kind would misread by 1000×; a Decimal as base64): refused.
 */
function epochMs(raw: unknown, msPerUnit: number, schemaName: string | undefined): number {
  const unit = msPerUnit === 1 ? 'epoch_ms' : 'epoch_s';
  if (schemaName !== undefined) throw new CdcInvalidError(`unsupported Connect schema ${JSON.stringify(schemaName)} for an ${unit} column`, { schemaName });
  if (typeof raw === 'bigint') {
    if (raw > BigInt(Number.MAX_SAFE_INTEGER) || raw < -BigInt(Number.MAX_SAFE_INTEGER))
      throw new CdcInvalidError(`${unit} out of range: ${raw}`, { value: String(raw) });
    return checkedMs(Number(raw) * msPerUnit, raw, unit);
  }
  if (typeof raw !== 'number' || !Number.isInteger(raw)) throw new CdcInvalidError(`${unit} must be an integer, got ${describe(raw)}`, { value: raw });
  return checkedMs(raw * msPerUnit, raw, unit);
}

function checkedMs(ms: number, raw: number | bigint, unit: string): number {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > MAX_ABS_MS) throw new CdcInvalidError(`${unit} out of range: ${String(raw)}`, { value: String(raw) });
  return ms;
}
