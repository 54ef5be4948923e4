/** Argument parsers shared by the operator commands: a bad value is refused by commander with the reason. */
import { InvalidArgumentError } from 'commander';
import { parseInstant } from '../core/utc-time';

/** ISO-8601 in any zone (no zone: UTC) → epoch ms. */
export function isoTimeArg(value: string): number {
  try {
    return parseInstant(value);
  } catch (err) {
    throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
  }
}

export function positiveIntArg(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

export function shardArg(value: string): number {
  if (!/^[0-9]+$/.test(value.trim())) throw new InvalidArgumentError(`not a shard number: ${JSON.stringify(value)}`);
  return Number(value);
}
