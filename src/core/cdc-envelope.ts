/**
 * Debezium change-event envelopes, as the JSON converter writes them.
 *
 * Glossary
 *   envelope   { before, after, source, op, ts_ms } — one row change
 *   op         c = insert, u = update, d = delete, r = snapshot read
 *   tombstone  a record with a null value that follows every delete (for log compaction)
 *   wrapper    with `schemas.enable=true` the envelope sits in { schema, payload }
 *
 * Pure: takes bytes, returns data or a CdcDecodeError saying why not. A bad record is data
 * (invariant I5): the caller sends it to the DLQ with the reason and moves on.
 */
import { TimebucketError } from './errors';

export type CdcOp = 'c' | 'u' | 'd' | 'r';
export type CdcRow = Readonly<Record<string, unknown>>;

export type CdcSource = Readonly<{ db?: string; table?: string; tsMs?: number; file?: string; pos?: number; gtid?: string }>;

export type CdcChange = Readonly<{ kind: 'change'; op: CdcOp; before: CdcRow | null; after: CdcRow | null; source: CdcSource }>;
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
    parsed = JSON.parse(typeof value === 'string' ? value : value.toString('utf8'));
  } catch (err) {
    throw new CdcDecodeError('value is not JSON', err);
  }
  // A JSON null value is what the converter writes for a tombstone with schemas enabled.
  if (parsed === null) return { kind: 'tombstone' };
  const envelope = unwrapSchema(parsed);
  if (envelope === null) return { kind: 'tombstone' };
  if (!isRecord(envelope)) throw new CdcDecodeError('envelope is not an object');
  const op = envelope['op'];
  if (typeof op !== 'string' || !OPS.has(op)) throw new CdcDecodeError(`unknown op ${JSON.stringify(op)}`);
  const before = rowOrNull(envelope['before'], 'before');
  const after = rowOrNull(envelope['after'], 'after');
  if (op !== 'd' && after === null) throw new CdcDecodeError(`op ${op} without an after image`);
  if (op === 'd' && before === null) throw new CdcDecodeError('delete without a before image');
  return { kind: 'change', op: op as CdcOp, before, after, source: decodeSource(envelope['source']) };
}

function unwrapSchema(parsed: unknown): unknown {
  if (isRecord(parsed) && 'payload' in parsed && 'schema' in parsed) return parsed['payload'];
  return parsed;
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
