import { Writable } from 'node:stream';
import { loadConfig } from '../../../src/config';
import { ControlSwitches } from '../../../src/control/switches';
import { defaultSwitches, Switch, SwitchName, switchNamesOf, Switches } from '../../../src/control/switch-state';
import type { SwitchRead } from '../../../src/control/sql/switch-store';
import { createLogger } from '../../../src/ops/logger';

const T0 = 1_700_000_000_000;

const NAMES = switchNamesOf(['coupon', 'order']);

function switches(o: Partial<Record<SwitchName, Partial<Switch>>> = {}, unknown: string[] = []): SwitchRead {
  const d: Switches = defaultSwitches(NAMES);
  return { switches: new Map([...d].map(([what, s]) => [what, { ...s, ...o[what] }])), unknown };
}

/** A poller over a database the test controls: `next` is what the next read returns (or throws). */
function harness() {
  let next: SwitchRead | Error = switches();
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  let reads = 0;
  const failures: unknown[] = [];
  const control = new ControlSwitches({
    names: NAMES,
    read: async () => {
      reads += 1;
      if (next instanceof Error) throw next;
      return next;
    },
    pollMs: 1_000,
    logger: createLogger('info', {}, sink),
    onPollFailed: (err) => failures.push(err),
  });
  let changes = 0;
  control.onChange(() => (changes += 1));
  return {
    control,
    set: (value: SwitchRead | Error) => void (next = value),
    reads: () => reads,
    failures,
    changes: () => changes,
    logs: (msg: string) => lines.filter((l) => l['msg'] === msg),
  };
}

const paused = (by = 'alice@host', reason: string | null = 'incident') => ({ paused: true, reason, updatedBy: by, updatedAt: new Date(T0) });

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

test('reads once at start, then polls every pollMs; a change is seen within one poll and reported once', async () => {
  const h = harness();
  await h.control.start();
  expect(h.reads()).toBe(1);
  expect(h.control.paused('coupon')).toBe(false);
  expect(h.logs('control switches read')).toHaveLength(1);

  h.set(switches({ coupon: paused() }));
  await jest.advanceTimersByTimeAsync(999);
  expect(h.control.paused('coupon')).toBe(false);
  await jest.advanceTimersByTimeAsync(1);
  expect(h.reads()).toBe(2);
  expect(h.control.paused('coupon')).toBe(true);
  expect(h.control.paused('order')).toBe(false);
  expect(h.changes()).toBe(2); // the first read, then the pause

  await jest.advanceTimersByTimeAsync(5_000); // unchanged polls: no news
  expect(h.changes()).toBe(2);
  expect(h.logs('control switch changed')).toEqual([
    expect.objectContaining({
      what: 'coupon',
      paused: true,
      perSecond: null,
      reason: 'incident',
      updatedBy: 'alice@host',
      updatedAt: new Date(T0).toISOString(),
      was: { paused: false, perSecond: null },
    }),
  ]);
  h.control.stop();
});

test('throttle: perSecond follows the switch, undefined when lifted', async () => {
  const h = harness();
  h.set(switches({ order: { perSecond: 25, updatedBy: 'bob', updatedAt: new Date(T0) } }));
  await h.control.start();
  expect(h.control.perSecond('order')).toBe(25);
  expect(h.control.perSecond('coupon')).toBeUndefined();
  h.set(switches({ order: { perSecond: null, updatedBy: 'bob', updatedAt: new Date(T0 + 1) } }));
  await jest.advanceTimersByTimeAsync(1_000);
  expect(h.control.perSecond('order')).toBeUndefined();
  h.control.stop();
});

test('before the first successful read everything counts as paused; the next good poll releases it', async () => {
  const h = harness();
  h.set(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
  await h.control.start();
  for (const what of ['coupon', 'order', 'scanner'] as const) expect(h.control.paused(what)).toBe(true);
  expect(h.control.current().known).toBe(false);
  expect(h.failures).toHaveLength(1);

  h.set(switches());
  await jest.advanceTimersByTimeAsync(1_000);
  expect(h.control.current().known).toBe(true);
  expect(h.control.paused('coupon')).toBe(false);
  expect(h.changes()).toBe(1);
  h.control.stop();
});

test('a failed poll keeps the last known state (never unpaused by an error), counts every failure and logs the spell once', async () => {
  const h = harness();
  h.set(switches({ coupon: paused() }));
  await h.control.start();
  expect(h.control.paused('coupon')).toBe(true);

  h.set(new Error('lost connection'));
  await jest.advanceTimersByTimeAsync(3_000);
  expect(h.failures).toHaveLength(3);
  expect(h.control.paused('coupon')).toBe(true);
  expect(h.logs('control switches poll failed; the last known state stays')).toHaveLength(1);

  h.set(switches());
  await jest.advanceTimersByTimeAsync(1_000);
  expect(h.logs('control switches poll recovered')).toHaveLength(1);
  expect(h.control.paused('coupon')).toBe(false);
  h.control.stop();
});

test('a slow read never overlaps the next poll; stop() ends the polling', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  let reads = 0;
  const control = new ControlSwitches({
    names: NAMES,
    read: async () => {
      reads += 1;
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 2_500));
      inFlight -= 1;
      return switches();
    },
    pollMs: 1_000,
    logger: createLogger('silent'),
  });
  const started = control.start();
  await jest.advanceTimersByTimeAsync(2_500);
  await started;
  await jest.advanceTimersByTimeAsync(10_000);
  expect(maxInFlight).toBe(1);
  expect(reads).toBe(1 + Math.floor(10_000 / 3_500) + 1);
  control.stop();
  const before = reads;
  await jest.advanceTimersByTimeAsync(10_000);
  expect(reads).toBeLessThanOrEqual(before + 1); // at most the read already in flight
});

test('a listener that throws does not stop the others', async () => {
  const h = harness();
  h.control.onChange(() => {
    throw new Error('boom');
  });
  let seen = 0;
  h.control.onChange(() => (seen += 1));
  await h.control.start();
  expect(seen).toBe(1);
  h.control.stop();
});

test("the switches are the entities' and the scanner's; an entity may not take the scanner's name", () => {
  expect(NAMES).toEqual(['coupon', 'order', 'scanner']);
  expect(switchNamesOf(['ticket'])).toEqual(['ticket', 'scanner']);
  expect(() => switchNamesOf(['scanner'])).toThrow(/cannot be named 'scanner'/);
});

test('a row naming no switch (an entity removed from the file) is ignored: logged once while it stays, never an error', async () => {
  const h = harness();
  h.set(switches({}, ['voucher']));
  await h.control.start();
  expect(h.control.current().known).toBe(true);
  expect([...h.control.current().switches.keys()]).toEqual(NAMES);
  await jest.advanceTimersByTimeAsync(3_000);
  expect(h.logs('control switch rows naming no entity of the entities file are ignored')).toEqual([expect.objectContaining({ ignored: ['voucher'] })]);
  expect(h.failures).toEqual([]);
  // A name that is not a switch of this process is a programmer error, not "not paused".
  expect(() => h.control.paused('voucher')).toThrow(RangeError);
  h.control.stop();
});

test('TB_CONTROL_POLL_MS: a second by default, validated like every setting', () => {
  expect(loadConfig({}).control.pollMs).toBe(1_000);
  expect(loadConfig({ TB_CONTROL_POLL_MS: '250' }).control.pollMs).toBe(250);
  expect(() => loadConfig({ TB_CONTROL_POLL_MS: '10' })).toThrow(/TB_CONTROL_POLL_MS/);
  expect(() => loadConfig({ TB_CONTROL_POLL_MS: 'soon' })).toThrow(/TB_CONTROL_POLL_MS/);
});
