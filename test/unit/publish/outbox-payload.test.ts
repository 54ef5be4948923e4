import { parseEntityFile } from '../../../src/core/entity-file';
import { parseOutboxPayload } from '../../../src/publish/outbox-payload';
import { catalogue, couponExpired, orderCancelled } from './default-catalogue';

const coupon = {
  event_key: 'coupon-expired-42-1000',
  event_type: 'COUPON_EXPIRED',
  coupon_id: '42',
  user_id: '9',
  from_status: 'ACTIVE',
  to_status: 'EXPIRED',
  due_at: 1_000,
  occurred_at: 1_250,
  path: 'stream',
  version: 3,
};

const order = {
  event_key: 'order-cancelled-7-1000',
  event_type: 'ORDER_CANCELLED',
  order_id: '7',
  user_id: '9',
  from_status: 'UNPAID',
  to_status: 'CANCELLED',
  reason: 'TIMEOUT',
  coupon_id: null,
  coupon_released: false,
  due_at: 1_000,
  occurred_at: 1_001,
  path: 'scanner',
  version: 1,
};

const parse = (input: Parameters<typeof parseOutboxPayload>[1]) => parseOutboxPayload(catalogue, input);

function row(payload: unknown, over: Partial<{ eventKey: string; eventType: string; entityId: string }> = {}) {
  const p = payload as { event_key?: string; event_type?: string };
  return {
    eventKey: over.eventKey ?? p.event_key ?? 'k',
    eventType: over.eventType ?? p.event_type ?? 'COUPON_EXPIRED',
    entityId: over.entityId ?? '42',
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  };
}

describe('parseOutboxPayload', () => {
  test('accepts a row whose columns agree with its payload', () => {
    expect(parse(row(coupon))).toEqual({ ok: true, event: couponExpired, payload: coupon, occurredAtMs: 1_250 });
    expect(parse(row(order, { entityId: '7' }))).toEqual({ ok: true, event: orderCancelled, payload: order, occurredAtMs: 1_001 });
  });

  test('keeps an id beyond 2^53 exact (a decimal string), and the whole payload with it', () => {
    const big = { ...coupon, event_key: 'coupon-expired-9223372036854775807-1000', coupon_id: '9223372036854775807', user_id: '18446744073709551615' };
    expect(parse(row(big, { entityId: '9223372036854775807' }))).toEqual({ ok: true, event: couponExpired, payload: big, occurredAtMs: 1_250 });
  });

  test('accepts a row written before ids were strings: a safe-integer id', () => {
    const legacy = { ...coupon, coupon_id: 42, user_id: 9 };
    expect(parse(row(legacy))).toMatchObject({ ok: true, payload: legacy });
  });

  test.each([
    ['not JSON', row('{"event_key":', { eventKey: 'k' }), /not JSON/],
    ['not an object', row('[1,2]', { eventKey: 'k' }), /not a JSON object/],
    ['an unknown event type', row(coupon, { eventType: 'COUPON_REVIVED' }), /unknown event type 'COUPON_REVIVED'/],
    ['a payload of another type than the row', row(coupon, { eventType: 'ORDER_CANCELLED' }), /event_type "COUPON_EXPIRED" differs/],
    ['a payload with another event_key', row(coupon, { eventKey: 'coupon-expired-42-999' }), /event_key "coupon-expired-42-1000" differs/],
    ['an entity id that is not the key', row(coupon, { entityId: '43' }), /coupon_id "42" differs from the row's entity_id 43/],
    ['an entity id that is not canonical', row({ ...coupon, coupon_id: '042' }), /coupon_id "042" differs/],
    ['an entity id that is a number beyond 2^53 (maybe rounded)', row({ ...coupon, coupon_id: 2 ** 53 }, { entityId: '9007199254740992' }), /coupon_id 9007199254740992 differs/],
    ['an entity id that is not a number or string', row({ ...coupon, coupon_id: [42] }), /coupon_id \[42\] differs/],
    ['an occurred_at that is not an instant', row({ ...coupon, occurred_at: '2031-01-01' }), /occurred_at "2031-01-01" is not/],
    ['an occurred_at out of Date range', row({ ...coupon, occurred_at: 9e15 }), /occurred_at 9000000000000000 is not/],
  ])('rejects %s with a reason', (_what, input, reason) => {
    const parsed = parse(input);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toMatch(reason);
  });
});

test('the event types and id fields are the catalogue\'s: another catalogue\'s event is poison, its own are read by their idField', () => {
  const tickets = parseEntityFile(
    {
      entities: [
        {
          ...{ name: 'ticket', table: 't_ticket', id: 'ticket_id', status: { column: 'state', type: 'integer' } },
          transitions: [
            {
              ...{ name: 'lapsed', from: [1], to: 2, due: { column: 'valid_until', kind: 'epoch_s' }, index: 'idx_t_ticket_state_valid' },
              event: { type: 'TICKET_LAPSED', ceType: 'shop.ticket.lapsed', avroName: 'shop.TicketLapsed', idField: 'ticket_ref', summary: 'A ticket lapsed.' },
            },
          ],
        },
      ],
    },
    'tickets.json',
  );
  expect(parseOutboxPayload(tickets, row(coupon))).toEqual({ ok: false, reason: "unknown event type 'COUPON_EXPIRED'" });
  const lapsed = { event_key: 'ticket-lapsed-42-1000', event_type: 'TICKET_LAPSED', ticket_ref: '42', from_status: 1, to_status: 2, due_at: 1_000, occurred_at: 1_000_001, path: 'stream' };
  expect(parseOutboxPayload(tickets, row(lapsed))).toMatchObject({ ok: true, event: { type: 'TICKET_LAPSED', idField: 'ticket_ref' }, payload: lapsed });
  expect(parseOutboxPayload(tickets, row({ ...lapsed, ticket_ref: '43' }))).toMatchObject({ ok: false, reason: expect.stringMatching(/ticket_ref "43" differs from the row's entity_id 42/) });
});
