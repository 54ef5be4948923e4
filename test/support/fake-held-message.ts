/** Builders for hold-stage unit tests: held messages and promises settled by the test. */
import { findEntity } from '../../src/core/entity-catalogue';
import { parseEntityFile } from '../../src/core/entity-file';
import type { HeldMessage } from '../../src/core/held-record';
import defaultEntities from '../../entities/default.json';

const defaults = parseEntityFile(defaultEntities, 'entities/default.json');

/** `transition` defaults to the entity's first in entities/default.json (coupon.expired, order.cancelled). */
export function heldMessage(
  o: Partial<{
    topic: string;
    partition: number;
    offset: string;
    shard: number;
    bucketStartMs: number;
    entity: string;
    transition: string;
    id: string;
    expireAtMs: number;
  }> = {},
): HeldMessage {
  const expireAtMs = o.expireAtMs ?? 0;
  const entity = o.entity ?? 'coupon';
  const transition = o.transition ?? findEntity(defaults, entity)?.transitions[0]?.name ?? 'expired';
  return {
    topic: o.topic ?? 'tbtest.minute.00',
    partition: o.partition ?? 0,
    offset: o.offset ?? '0',
    shard: o.shard ?? 0,
    bucketStartMs: o.bucketStartMs ?? expireAtMs,
    releaseAtMs: o.bucketStartMs ?? expireAtMs,
    entry: { entity, transition, id: o.id ?? '1', expireAtMs },
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
