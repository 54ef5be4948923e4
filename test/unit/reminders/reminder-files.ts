/** Entities files with reminders on the demo coupons table: one reminder per fire point, or digests. */
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

type Transition = Record<string, unknown> & { reminders?: Record<string, unknown> };
type File = { entities: Array<Record<string, unknown> & { table?: string; transitions: Transition[] }> };

const reminderEvent = () => ({
  type: 'COUPON_EXPIRING_SOON',
  ceType: 'timebucket.coupon.expiring_soon',
  avroName: 'timebucket.events.CouponExpiringSoon',
  idField: 'coupon_id',
  summary: 'An ACTIVE coupon is about to expire.',
  fields: [{ name: 'user_id', column: 'user_id' }],
});

const digestEvent = () => ({
  type: 'USER_COUPONS_EXPIRING_SOON',
  ceType: 'timebucket.coupon.user_expiring_soon',
  avroName: 'timebucket.events.UserCouponsExpiringSoon',
  userField: 'user_id',
  itemIdField: 'coupon_id',
  summary: 'A user’s ACTIVE coupons about to expire.',
  fields: [{ name: 'version', column: 'version' }],
});

/** `before`: the fire points (default 3d, 1d, 30m; digested 3d, 1d, 2h); `window`: the digest's (default 1h). */
export function remindingFile(kind: 'single' | 'digest', opts: { before?: string[]; window?: string } = {}): File {
  const before = opts.before ?? (kind === 'single' ? ['1d', '3d', '30m'] : ['1d', '3d', '2h']);
  const reminders =
    kind === 'single'
      ? { before, event: reminderEvent() }
      : { before, digest: { user: 'user_id', index: 'idx_coupons_user', window: opts.window ?? '1h', event: digestEvent() } };
  return {
    entities: [
      {
        name: 'coupon',
        table: 'coupons',
        id: 'id',
        status: { column: 'status', type: 'string', values: ['INIT', 'ACTIVE', 'LOCKED', 'USED', 'EXPIRED', 'INVALID'] },
        transitions: [
          {
            name: 'expired',
            from: ['ACTIVE'],
            to: 'EXPIRED',
            due: { column: 'expire_time', kind: 'datetime' },
            index: 'idx_coupons_status_expire_id',
            set: { expired_at: { now: 'datetime' }, version: { increment: 1 } },
            event: {
              type: 'COUPON_EXPIRED',
              ceType: 'timebucket.coupon.expired',
              avroName: 'timebucket.events.CouponExpired',
              idField: 'coupon_id',
              summary: 'A coupon went ACTIVE → EXPIRED because its expire_time passed.',
              fields: [{ name: 'user_id', column: 'user_id' }],
            },
            reminders,
          },
        ],
      },
    ],
  };
}
