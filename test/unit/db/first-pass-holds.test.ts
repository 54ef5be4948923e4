/** The first-pass hold (db/first-pass-holds.ts): a held transition's batches do not run, and come back done as `held`; the others run. */
import type { FirstPassHold } from '../../../src/db/check-entity-data';
import { FirstPassHolds, heldTablesByTransition, holdFirstPass } from '../../../src/db/first-pass-holds';
import type { RunTransition } from '../../../src/expire/transition-batch';
import { defaultCatalogue } from '../../support/catalogue';

const [coupon, order] = [defaultCatalogue.transitions.find((t) => t.entity === 'coupon')!, defaultCatalogue.transitions.find((t) => t.entity === 'order')!];
const locationOf = (entity: string) => defaultCatalogue.entities.find((e) => e.name === entity)!.locations[0]!;
const hold: FirstPassHold = {
  transition: coupon,
  location: locationOf('coupon'),
  problem: 'coupon.expired (timebucket.coupons): the first pass would transition …',
};
const entries = [
  { id: '1', expireAtMs: 1 },
  { id: '2', expireAtMs: 2 },
];

test('a held transition runs no transaction: its entries come back held (done, none transitioned), counted; another transition runs', async () => {
  const ran: string[] = [];
  const run: RunTransition = async (t, batch) => {
    ran.push(t.ref);
    return { transitioned: batch.map((e) => ({ id: e.id, dueAtMs: e.expireAtMs })), notYetDue: [], stale: [], dbNowMs: 5 };
  };
  const changes: number[] = [];
  const holds = new FirstPassHolds((all) => void changes.push(all.length));
  const counted: Array<[string, number]> = [];
  const batches = holdFirstPass({ run }, defaultCatalogue, holds, { onHeld: (entity, n) => void counted.push([entity, n]), now: () => 7 });

  await expect(batches.run(coupon, entries, 'stream')).resolves.toMatchObject({ transitioned: [{ id: '1' }, { id: '2' }] });
  holds.add([hold]);
  expect(await batches.run(coupon, entries, 'stream')).toEqual({ transitioned: [], notYetDue: [], stale: [], held: entries, dbNowMs: 7 });
  await expect(batches.run(order, entries, 'scanner')).resolves.toMatchObject({ transitioned: [{ id: '1' }, { id: '2' }] });
  expect({ ran, counted, changes }).toEqual({ ran: [coupon.ref, order.ref], counted: [['coupon', 2]], changes: [1] });
  expect(holds.list()).toEqual([{ transition: 'coupon.expired', database: 'main', table: 'coupons', reason: hold.problem }]);
  expect(heldTablesByTransition(defaultCatalogue, [hold])).toEqual(
    defaultCatalogue.transitions.map((t) => ({ entity: t.entity, transition: t.name, tables: t === coupon ? 1 : 0 })),
  );
});
