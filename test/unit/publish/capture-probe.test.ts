/**
 * The capture probe's bookkeeping and its reader's supervision, on a fake database (its INSERTs
 * recorded) and fake kafkajs consumers (their handler called by the test, their events emitted):
 * a probe seen confirms the earlier ones its reader never saw, and a reader kafkajs gives up is
 * replaced by a new consumer, health saying so while it is down.
 */
import type { Knex } from 'knex';
import { captureProbe } from '../../../src/publish/capture-probe';
import { createLogger } from '../../../src/ops/logger';
import { consumerEvents as events, fakeConsumer, type FakeConsumer } from '../../support/fake-consumer';
import { waitFor } from '../../support/wait-for';

/** A probe back on the wire: its key in the event_key header. */
const deliver = (c: FakeConsumer, key: string) => c.deliver({ event_key: key });

function probeWith(opts: { stallMs?: number; connected?: (n: number) => Promise<void> } = {}) {
  const written: string[] = [];
  const db = { raw: async (_sql: string, bindings: unknown[]) => void written.push(String(bindings[0])) } as unknown as Knex;
  const consumers: FakeConsumer[] = [];
  let now = 1_000_000;
  const probe = captureProbe({
    dbs: { main: db },
    topic: 'tb.probe',
    group: 'tb.probe-1',
    newConsumer: () => {
      const c = fakeConsumer(opts.connected?.(consumers.length));
      consumers.push(c);
      return c.consumer;
    },
    intervalMs: 5,
    stallMs: opts.stallMs ?? 60_000,
    clock: { now: () => now },
    logger: createLogger('silent'),
  });
  return { probe, written, consumers, advance: (ms: number) => (now += ms), now: () => now };
}

test('a probe seen confirms every earlier one of its database, the ones the reader never saw too', async () => {
  const { probe, written, consumers, advance } = probeWith();
  await probe.start();
  try {
    await waitFor('three probes written', () => (written.length >= 3 && consumers.length === 1 ? true : undefined), { timeoutMs: 5_000, intervalMs: 5 });
    await probe.stop();
    advance(10_000);
    // The first probe landed before the reader had a position; the second came back.
    await deliver(consumers[0]!, written[1]!);
    expect(probe.confirmedAgeMs('main')).toBe(10_000);
    expect(probe.lagSeconds()).toEqual({ main: 10 });
    // The last one back: nothing is pending, the first one included.
    await deliver(consumers[0]!, written[written.length - 1]!);
    expect(probe.lagSeconds()).toEqual({ main: 0 });
  } finally {
    await probe.stop();
  }
});

test('a reader kafkajs gives up is replaced by a new consumer; health fails once it has been down longer than stallMs', async () => {
  let release!: () => void;
  const secondConnects = new Promise<void>((resolve) => (release = resolve));
  const { probe, written, consumers, advance } = probeWith({ stallMs: 5_000, connected: (n) => (n === 1 ? secondConnects : Promise.resolve()) });
  await probe.start();
  try {
    await waitFor('the first reader running', () => (consumers.length === 1 && written.length > 0 ? true : undefined), { timeoutMs: 5_000, intervalMs: 5 });
    expect(probe.health()).toEqual({ ok: true });
    consumers[0]!.emit(events.CRASH, { error: new Error('Failed to find group coordinator'), groupId: 'tb.probe-1', restart: false });
    await waitFor('a new consumer, connecting', () => (consumers.length === 2 ? true : undefined), { timeoutMs: 10_000, intervalMs: 5 });
    expect(consumers[0]!.disconnected).toBe(true);
    // Down, not yet for stallMs: healthy (a broker blip is no reason to restart the process).
    expect(probe.health()).toEqual({ ok: true });
    advance(5_001);
    expect(probe.health()).toEqual({ ok: false, reason: 'capture probe reader down for 5001 ms: Failed to find group coordinator' });
    release();
    await waitFor('the new reader running', () => (consumers[1]!.running() ? true : undefined), { timeoutMs: 5_000, intervalMs: 5 });
    consumers[1]!.emit(events.GROUP_JOIN, {});
    expect(probe.health()).toEqual({ ok: true });
    // It reads: what it sees clears the lag.
    await deliver(consumers[1]!, written[written.length - 1]!);
    expect(probe.lagSeconds()).toEqual({ main: 0 });
  } finally {
    await probe.stop();
  }
  expect(consumers.every((c) => c.disconnected)).toBe(true);
});
