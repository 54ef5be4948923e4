/**
 * `timebucket run --demo`: feeds a small workload into the running pipeline and prints a live
 * summary, so a newcomer sees coupons expiring and events arriving within a minute:
 * coupons due over the next ~40 s, unpaid orders (one holding a coupon), one order paid in time,
 * and the reminders of entities/demo.json (`make run` uses it): each coupon's 20 s reminder, and
 * one digest per 10 s window for the fire points 40 s before, for three coupons due at ~55 s.
 */
import type { Consumer } from 'kafkajs';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Topology } from '../core/topology';
import { createDb } from '../db/knex';
import { createKafka } from '../kafka/client';
import type { Logger } from '../ops/logger';
import { createSchemaRegistry } from '../publish/schema-registry';

export type Demo = Readonly<{ stop: () => Promise<void> }>;

/** The fields the summary reads, of any of the four events (a digest has items, no due_at). */
type DemoEvent = { event_type: string; event_key: string; user_id: bigint; due_at?: number; occurred_at: number; window_start?: number; items?: unknown[] };

function describe(e: DemoEvent): string {
  if (e.items !== undefined) return `${e.event_key} (${e.items.length} coupons, ${e.occurred_at - e.window_start!} ms after its window began)`;
  if (e.event_type === 'COUPON_EXPIRING_SOON') return `${e.event_key} (${e.due_at! - e.occurred_at} ms before due)`;
  return `${e.event_key} (${e.occurred_at - e.due_at!} ms after due)`;
}

export async function startDemo(config: Config, topology: Topology, logger: Logger): Promise<Demo> {
  const db = createDb(config.db, { logger });
  const marker = 900_000_000 + Math.floor(Math.random() * 1_000_000);
  const { couponIds, orderIds } = await writeDemoRows(db, marker);
  console.log(
    `demo: ${couponIds.length} coupons due over the next 60 s (one locked by an unpaid order), ${orderIds.length} unpaid orders, 1 order paid in time; reminders 20 s before, a digest 40 s before`,
  );
  const followed = await followDemoEvents(config, topology, logger, marker);
  let previous = '';
  const summary = setInterval(() => {
    void (async () => {
      const [c] = await db('coupons').whereIn('id', couponIds).where({ status: 'EXPIRED' }).count({ n: '*' });
      const [o] = await db('orders').whereIn('id', orderIds).where({ status: 'CANCELLED' }).count({ n: '*' });
      const line = `demo: coupons expired ${Number(c!.n)}/${couponIds.length} · orders cancelled ${Number(o!.n)}/${orderIds.length} · ${followed.tally()}`;
      // Printed when something changed, so the terminal shows progress rather than a wall of repeats.
      if (line !== previous) console.log(line);
      previous = line;
    })().catch((err: unknown) => logger.warn({ err }, 'demo summary failed'));
  }, 1_000);

  return {
    async stop() {
      clearInterval(summary);
      await followed.consumer.disconnect();
      await db.destroy();
    },
  };
}

/** The demo's rows, as an application would write them, due by the database clock from now. */
async function writeDemoRows(db: Knex, marker: number): Promise<{ couponIds: number[]; orderIds: number[] }> {
  const due = (seconds: number) => db.raw('NOW(3) + INTERVAL ? MICROSECOND', [Math.round(seconds * 1_000_000)]);
  const couponIds: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const [id] = await db('coupons').insert({ user_id: marker, status: 'ACTIVE', expire_time: due(5 + i * 2) });
    couponIds.push(id!);
  }
  const orderIds: number[] = [];
  for (let i = 0; i < 4; i += 1) orderIds.push((await db('orders').insert({ user_id: marker, status: 'UNPAID', expire_time: due(10 + i * 5) }))[0]!);
  const [lockedCoupon] = await db('coupons').insert({ user_id: marker, status: 'LOCKED', expire_time: due(8) });
  const [holdingOrder] = await db('orders').insert({ user_id: marker, status: 'UNPAID', coupon_id: lockedCoupon, expire_time: due(15) });
  await db('coupons').where({ id: lockedCoupon }).update({ locked_order_id: holdingOrder });
  const [paidOrder] = await db('orders').insert({ user_id: marker, status: 'UNPAID', expire_time: due(12) });
  await db('orders').where({ id: paidOrder }).update({ status: 'PAID' });
  // Due at 55-57 s: their 40 s fire points fall 15-17 s from now, in one or two 10 s windows.
  for (let i = 0; i < 3; i += 1)
    couponIds.push((await db('coupons').insert({ user_id: marker, status: 'ACTIVE', face_value: 5 * (i + 1), expire_time: due(55 + i) }))[0]!);
  couponIds.push(lockedCoupon!);
  orderIds.push(holdingOrder!);
  return { couponIds, orderIds };
}

/** The demo's events as they arrive on the event topics, counted by kind; the last one described. */
async function followDemoEvents(config: Config, topology: Topology, logger: Logger, marker: number): Promise<{ consumer: Consumer; tally: () => string }> {
  // The events' own client: ids (longs) decode exactly, as bigints.
  const registry = createSchemaRegistry(config.registry);
  const consumer = createKafka(config.kafka, logger, '-demo').consumer({ groupId: `${config.groupPrefix}.demo-${marker}`, maxWaitTimeInMs: 200 });
  let events = 0;
  let reminders = 0;
  let digests = 0;
  let lastEvent = '';
  await consumer.connect();
  await consumer.subscribe({ topics: topology.events.map((e) => e.topic), fromBeginning: false });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const value = (await registry.decode(message.value!)) as DemoEvent;
      if (value.user_id !== BigInt(marker)) return;
      if (value.event_type === 'COUPON_EXPIRING_SOON') reminders += 1;
      else if (value.event_type === 'USER_COUPONS_EXPIRING_SOON') digests += 1;
      else events += 1;
      lastEvent = describe(value);
    },
  });
  return {
    consumer,
    tally: () => `events received ${events} · reminders ${reminders} · digests ${digests}${lastEvent ? ` · last ${lastEvent}` : ''}`,
  };
}
