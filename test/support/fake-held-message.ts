/** Builders for hold-stage unit tests: held messages and promises settled by the test. */
import type { EntityType } from '../../src/core/bucket-entry';
import type { HeldMessage } from '../../src/core/held-record';

export function heldMessage(
  o: Partial<{ topic: string; partition: number; offset: string; shard: number; bucketStartMs: number; entity: EntityType; id: string; expireAtMs: number }> = {},
): HeldMessage {
  const expireAtMs = o.expireAtMs ?? 0;
  return {
    topic: o.topic ?? 'tbtest.minute.00',
    partition: o.partition ?? 0,
    offset: o.offset ?? '0',
    shard: o.shard ?? 0,
    bucketStartMs: o.bucketStartMs ?? expireAtMs,
    releaseAtMs: o.bucketStartMs ?? expireAtMs,
    entry: { v: 1, entity: o.entity ?? 'coupon', id: o.id ?? '1', expireAtMs },
  };
}

export type Deferred<T> = { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
