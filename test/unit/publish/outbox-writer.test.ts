/** The router's outbox writer (publish/outbox-writer.ts): what it does with an event it cannot encode. */
import type { Knex } from 'knex';
import { transitionOf } from '../../../src/core/entity-catalogue';
import { TimebucketError } from '../../../src/core/errors';
import { transitionEvent } from '../../../src/core/events';
import { eventOutboxWriter, type RejectedEvent } from '../../../src/publish/outbox-writer';
import { createEventEncoder } from '../../../src/publish/event-encoder';
import { eventSchemas } from '../../../src/publish/schemas';
import { catalogue } from './default-catalogue';

const topics = {
  COUPON_EXPIRED: 'shop.events.coupon-expired',
  COUPON_EXPIRING_SOON: 'shop.events.coupon-expiring-soon',
  USER_COUPONS_EXPIRING_SOON: 'shop.events.user-coupons-expiring-soon',
  ORDER_CANCELLED: 'shop.events.order-cancelled',
};
const expired = transitionOf(catalogue, 'coupon', 'expired');
// Nothing is encoded in these cases, so nothing reaches the transaction.
const trx = {} as Knex.Transaction;

const row = (id: string) => ({
  event: transitionEvent(
    expired,
    { id, status: 'ACTIVE', dueAtMs: Date.UTC(2031, 0, 1), columns: { user_id: '7', version: 0 } },
    { occurredAtMs: Date.UTC(2031, 0, 1, 0, 0, 1), path: 'stream', effects: [] },
  ),
  entityType: 'coupon',
  entityId: id,
});

function encoder(ids: Record<string, number>) {
  const e = createEventEncoder({ catalogue, topics, schemaTexts: eventSchemas(catalogue), registryUrl: 'http://registry:8081' });
  e.setSchemaIds(ids);
  return e;
}

test('an event without a schema id holds the transaction: a retriable SCHEMA_ID_MISSING, nothing written anywhere', async () => {
  const rejected: RejectedEvent[] = [];
  const write = eventOutboxWriter(encoder({}), { rejected: async (events) => void rejected.push(...events) });
  const failure = await write(trx, [row('1')]).catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(TimebucketError);
  expect(failure).toMatchObject({ code: 'SCHEMA_ID_MISSING', retriable: true, message: expect.stringMatching(/timebucket schemas register/) });
  expect(rejected).toEqual([]);
});

test('an event its schema rejects goes to `rejected` with its code and reason, and counts as written', async () => {
  const rejected: RejectedEvent[] = [];
  const write = eventOutboxWriter(encoder({ COUPON_EXPIRED: 1 }), { rejected: async (events) => void rejected.push(...events) });
  // Above 2^63 - 1: an Avro long cannot hold the id.
  expect(await write(trx, [row('18446744073709551615')])).toBe(1);
  expect(rejected).toEqual([
    {
      event: expect.objectContaining({ event_type: 'COUPON_EXPIRED' }),
      entityId: '18446744073709551615',
      code: 'EVENT_REJECTED',
      reason: expect.stringMatching(/coupon_id/),
    },
  ]);
});

test('without `rejected`, such an event fails the transaction, named', async () => {
  const write = eventOutboxWriter(encoder({ COUPON_EXPIRED: 1 }));
  await expect(write(trx, [row('18446744073709551615')])).rejects.toMatchObject({
    code: 'EVENT_REJECTED',
    retriable: false,
    message: expect.stringMatching(/cannot be published: does not match the Avro schema/),
  });
});
