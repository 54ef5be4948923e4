/**
 * Entity catalogues for the reconcile and ops unit tests: the default file (coupons and orders
 * as today), and small ones with what the default does not have: an integer status with a
 * two-value from-set and an epoch-ms due column, and one entity with two transitions.
 */
import { transitionOf, type EntityCatalogue } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import defaultEntities from '../../../entities/default.json';

export const defaults: EntityCatalogue = parseEntityFile(defaultEntities, 'entities/default.json');
export const couponExpired = transitionOf(defaults, 'coupon', 'expired');
export const orderCancelled = transitionOf(defaults, 'order', 'cancelled');

const event = (type: string) => ({
  type,
  ceType: `test.${type.toLowerCase()}`,
  avroName: `test.events.E${type}`,
  idField: 'row_id',
  summary: `${type} for tests.`,
});

/** ticket: integer status (0 open, 1 held, 2 waiting, 3 lapsed); lapsed from 1 or 2 at deadline_ms (epoch ms), reason 'LAPSED'. */
export const tickets: EntityCatalogue = parseEntityFile(
  {
    entities: [
      {
        name: 'ticket',
        table: 'tickets',
        id: 'ticket_id',
        status: { column: 'state', type: 'integer', values: [0, 1, 2, 3] },
        transitions: [
          {
            name: 'lapsed',
            from: [1, 2],
            to: 3,
            due: { column: 'deadline_ms', kind: 'epoch_ms' },
            index: 'idx_tickets_state_deadline',
            set: { reason: { value: 'LAPSED' }, lapsed_at: { now: 'epoch_ms' } },
            event: event('TICKET_LAPSED'),
          },
        ],
      },
    ],
  },
  'tickets.json',
);
export const ticketLapsed = transitionOf(tickets, 'ticket', 'lapsed');

/** coupon with two transitions: expired (ACTIVE at expire_time) and unlocked (LOCKED at lock_until). */
export const twoCouponTransitions: EntityCatalogue = parseEntityFile(
  {
    entities: [
      {
        name: 'coupon',
        table: 'coupons',
        id: 'id',
        status: { column: 'status', type: 'string' },
        transitions: [
          {
            name: 'expired',
            from: ['ACTIVE'],
            to: 'EXPIRED',
            due: { column: 'expire_time', kind: 'datetime' },
            index: 'idx_coupons_status_expire_id',
            event: event('COUPON_EXPIRED'),
          },
          {
            name: 'unlocked',
            from: ['LOCKED'],
            to: 'ACTIVE',
            due: { column: 'lock_until', kind: 'epoch_s' },
            index: 'idx_coupons_status_lock_id',
            event: event('COUPON_UNLOCKED'),
          },
        ],
      },
    ],
  },
  'two-transitions.json',
);
