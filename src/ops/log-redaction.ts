/**
 * What a log line may carry: a copy of the logged value with its credentials replaced by
 * "[redacted]" and its binary data by a short description, the caller's objects untouched.
 *
 * Not pino's `redact` paths: its redactor clones the objects on a wildcard path with their
 * prototype and then reads every enumerable property of the clone, and a clone of a Buffer (a
 * knex error's query bindings) calls Buffer's `parent` getter on a receiver that is no typed array,
 * which throws and lost the line. Here nothing is cloned that is not changed, and binary data is
 * never walked into.
 */
import { types } from 'node:util';

const REDACTED = '[redacted]';

/**
 * Never logged, at whatever depth they sit (a config, a client's options in an error, an
 * environment): passwords and the variables that carry them.
 */
const SECRET_KEYS = new Set(['password', 'TB_DB_PASSWORD', 'TB_KAFKA_SASL_PASSWORD', 'TB_REGISTRY_PASSWORD']);

/** Deeper than any object worth a log line; what lies below is cut so no credential there goes unseen. */
const MAX_DEPTH = 12;
/** Enough bytes to tell one key or payload from another, short enough not to flood a line. */
const PREVIEW_BYTES = 16;

/**
 * The value as it may be logged. The same value back when nothing in it needs changing (most log
 * lines: a few strings and numbers), so the common case allocates nothing.
 */
export function redactForLog(value: unknown): unknown {
  return redact(value, 0, []);
}

function redact(value: unknown, depth: number, ancestors: object[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value) || types.isAnyArrayBuffer(value)) return describeBinary(value);
  if (types.isDate(value)) return value;
  if (ancestors.includes(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[too deep to log]';
  ancestors.push(value);
  try {
    if (Array.isArray(value)) return redactArray(value, depth, ancestors);
    if (value instanceof Error || types.isNativeError(value)) return redactError(value as Error, depth, ancestors);
    // What JSON.stringify would write in its place (a URL's address, a library's own shape).
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    const json: unknown = typeof toJSON === 'function' ? toJSON.call(value) : value;
    if (json !== value) return redact(json, depth + 1, ancestors);
    return redactObject(value as Record<string, unknown>, depth, ancestors);
  } finally {
    ancestors.pop();
  }
}

function redactArray(items: unknown[], depth: number, ancestors: object[]): unknown[] {
  let copy: unknown[] | undefined;
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i];
    const clean = redact(item, depth + 1, ancestors);
    if (clean !== item) (copy ??= items.slice())[i] = clean;
  }
  return copy ?? items;
}

/** Own enumerable properties only: those are what JSON.stringify writes. A plain object if copied. */
function redactObject(object: Record<string, unknown>, depth: number, ancestors: object[]): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(object)) {
    const field = object[key];
    const clean = SECRET_KEYS.has(key) ? REDACTED : redact(field, depth + 1, ancestors);
    if (clean !== field) (copy ??= { ...object })[key] = clean;
  }
  return copy ?? object;
}

/**
 * Every own property, enumerable or not (an AggregateError's `errors` are logged by pino's error
 * serializer), and a copy keeps the error's prototype and which properties are enumerable, so
 * that serializer writes the same type, message, stack and fields as for the original.
 */
function redactError(error: Error, depth: number, ancestors: object[]): Error {
  const errorFields = error as unknown as Record<string, unknown>;
  let changed: Map<string, unknown> | undefined;
  for (const key of Object.getOwnPropertyNames(error)) {
    const field = errorFields[key];
    const clean = SECRET_KEYS.has(key) ? REDACTED : redact(field, depth + 1, ancestors);
    if (clean !== field) (changed ??= new Map()).set(key, clean);
  }
  if (changed === undefined) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object | null) as Error;
  for (const key of Object.getOwnPropertyNames(error)) {
    const enumerable = Object.getOwnPropertyDescriptor(error, key)?.enumerable ?? false;
    const value = changed.has(key) ? changed.get(key) : errorFields[key];
    Object.defineProperty(copy, key, { value, enumerable, writable: true, configurable: true });
  }
  return copy;
}

/** "[Buffer 5 bytes: 68656c6c6f]": its size and first bytes, not a JSON array of every byte. */
function describeBinary(binary: ArrayBufferView | ArrayBufferLike): string {
  const bytes = ArrayBuffer.isView(binary)
    ? Buffer.from(binary.buffer, binary.byteOffset, Math.min(binary.byteLength, PREVIEW_BYTES))
    : Buffer.from(binary, 0, Math.min(binary.byteLength, PREVIEW_BYTES));
  const kind = Buffer.isBuffer(binary) ? 'Buffer' : Object.prototype.toString.call(binary).slice(8, -1) || 'binary';
  const more = binary.byteLength > PREVIEW_BYTES ? '…' : '';
  return `[${kind} ${binary.byteLength} bytes: ${bytes.toString('hex')}${more}]`;
}
