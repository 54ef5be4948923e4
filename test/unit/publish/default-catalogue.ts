/**
 * The default entities file (entities/default.json: today's coupons and orders) as the encoder
 * reads it, for the publish tests. Not a test file.
 */
import { join } from 'node:path';
import type { EventSpec } from '../../../src/core/entity-catalogue';
import { findEvent } from '../../../src/core/entity-catalogue';
import { loadEntities } from '../../../src/ops/load-entities';

export const root = join(__dirname, '../../..');
export const catalogue = loadEntities(join(root, 'entities/default.json'));

/** The default catalogue's event of `type`; a test naming another type is a broken test. */
export function eventSpec(type: string): EventSpec {
  const spec = findEvent(catalogue, type);
  if (spec === undefined) throw new RangeError(`no event ${type} in ${catalogue.source}`);
  return spec;
}

export const couponExpired = eventSpec('COUPON_EXPIRED');
export const orderCancelled = eventSpec('ORDER_CANCELLED');
