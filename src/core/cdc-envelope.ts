/**
 * Debezium change-event envelopes, as the JSON converter writes them.
 *
 * Glossary
 *   envelope   { before, after, source, op, ts_ms } — one row change
 *   op         c = insert, u = update, d = delete, r = snapshot read
 *   tombstone  a record with a null value that follows every delete (for log compaction)
 *   wrapper    with `schemas.enable=true` the envelope sits in { schema, payload }
 *   fieldSchemas  Connect schema name per row column, read from the wrapper's before/after
 *              structs (expire_time → io.debezium.time.Timestamp). It says how a value is
 *              encoded (ms, µs, ISO string…), which the bare value cannot; empty without wrapper.
 *
 * Numbers: an integer beyond 2^53 (a BIGINT id, written by the JSON converter as a JSON number)
 * decodes to an exact bigint, never a rounded double; see cdc-json.ts (and its one exception).
 *
 * Pure: takes bytes, returns data or a CdcDecodeError saying why not. A bad record is data
 * (invariant I5): the caller sends it to the DLQ with the reason and moves on.
 */
import { parseCdcJson } from './cdc-json';
import { TimebucketError } from './errors';

export type CdcOp = 'c' | 'u' | 'd' | 'r';
/** Column → value as the converter wrote it; an integer beyond 2^53 is a bigint. */
export type CdcRow = Readonly<Record<string, unknown>>;

export type CdcSource = Readonly<{ db?: string; table?: string; tsMs?: number; file?: string; pos?: number; gtid?: string }>;

export type CdcChange = Readonly<{
  kind: 'change';
  op: CdcOp;
  before: CdcRow | null;
  after: CdcRow | null;
  source: CdcSource;
  fieldSchemas: Readonly<Record<string, string>>;
}>;
export type CdcTombstone = Readonly<{ kind: 'tombstone' }>;
export type CdcEvent = CdcChange | CdcTombstone;

export class CdcDecodeError extends TimebucketError {
  constructor(reason: string, cause?: unknown) {
    super('CDC_UNDECODABLE', reason, { retriable: false, cause });
  }
}

const OPS: ReadonlySet<string> = new Set(['c', 'u', 'd', 'r']);

export function decodeCdcValue(value: Buffer | string | null): CdcEvent {
  if (value === null || value.length === 0) return { kind: 'tombstone' };
  let parsed: unknown;
  try {
    parsed = parseCdcJson(typeof value === 'string' ? value : value.toString('utf8'));
  } catch (err) {
    throw new CdcDecodeError('value is not JSON', err);
  }
  // A JSON null value is what the converter writes for a tombstone with schemas enabled.
  if (parsed === null) return { kind: 'tombstone' };
  const { envelope, fieldSchemas } = unwrapSchema(parsed);
  if (envelope === null) return { kind: 'tombstone' };
  if (!isRecord(envelope)) throw new CdcDecodeError('envelope is not an object');
  const op = envelope['op'];
  // String() for a bigint op, which JSON.stringify cannot show.
  if (typeof op !== 'string' || !OPS.has(op)) throw new CdcDecodeError(`unknown op ${typeof op === 'bigint' ? String(op) : JSON.stringify(op)}`);
  const before = rowOrNull(envelope['before'], 'before');
  const after = rowOrNull(envelope['after'], 'after');
  if (op !== 'd' && after === null) throw new CdcDecodeError(`op ${op} without an after image`);
  if (op === 'd' && before === null) throw new CdcDecodeError('delete without a before image');
  return { kind: 'change', op: op as CdcOp, before, after, source: decodeSource(envelope['source']), fieldSchemas };
}

const NO_FIELD_SCHEMAS: Readonly<Record<string, string>> = Object.freeze({});

function unwrapSchema(parsed: unknown): { envelope: unknown; fieldSchemas: Readonly<Record<string, string>> } {
  if (isRecord(parsed) && 'payload' in parsed && 'schema' in parsed) {
    return { envelope: parsed['payload'], fieldSchemas: rowFieldSchemas(parsed['schema']) };
  }
  return { envelope: parsed, fieldSchemas: NO_FIELD_SCHEMAS };
}

/**
 * Schema names of the row columns, from the envelope schema's `before` and `after` structs (both
 * describe the same table, so merging them loses nothing). Lenient on purpose: the schema is
 * only a hint for decoding values, so a missing or odd schema yields fewer names, not an error;
 * consumers fall back to decoding the bare value and reject it there if it is ambiguous.
 */
function rowFieldSchemas(schema: unknown): Readonly<Record<string, string>> {
  if (!isRecord(schema) || !Array.isArray(schema['fields'])) return NO_FIELD_SCHEMAS;
  const names: [string, string][] = [];
  for (const image of schema['fields']) {
    if (!isRecord(image) || (image['field'] !== 'before' && image['field'] !== 'after')) continue;
    if (!Array.isArray(image['fields'])) continue;
    for (const column of image['fields']) {
      if (isRecord(column) && typeof column['field'] === 'string' && typeof column['name'] === 'string') {
        names.push([column['field'], column['name']]);
      }
    }
  }
  // fromEntries defines own properties, so a column named "__proto__" cannot touch the prototype.
  return names.length === 0 ? NO_FIELD_SCHEMAS : Object.freeze(Object.fromEntries(names));
}

function rowOrNull(v: unknown, name: string): CdcRow | null {
  if (v === null || v === undefined) return null;
  if (!isRecord(v)) throw new CdcDecodeError(`${name} is not an object`);
  return v;
}

function decodeSource(v: unknown): CdcSource {
  if (!isRecord(v)) return {};
  const str = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const num = (k: string) => (typeof v[k] === 'number' ? (v[k] as number) : undefined);
  return { db: str('db'), table: str('table'), tsMs: num('ts_ms'), file: str('file'), pos: num('pos'), gtid: str('gtid') };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
