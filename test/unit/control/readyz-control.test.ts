/** /readyz reports the control switches in its JSON body; a paused process stays ready. */
import { createLogger } from '../../../src/ops/logger';
import { createMetrics } from '../../../src/ops/metrics';
import { startOpsServer, OpsServer } from '../../../src/ops/http-server';
import { defaultSwitches, summarize, switchNamesOf, SwitchState } from '../../../src/control/switch-state';

let server: OpsServer;
let ready = true;
const NAMES = switchNamesOf(['coupon', 'order']);
let state: SwitchState = { known: true, switches: defaultSwitches(NAMES) };
const metrics = createMetrics({ entities: ['coupon', 'order'] });

beforeAll(async () => {
  server = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    registry: metrics.registry,
    isReady: () => ready,
    readyDetails: () => ({ control: summarize(state) }),
    logger: createLogger('silent'),
  });
  metrics.trackControl(() => [...state.switches.values()].map((s) => ({ what: s.what, paused: s.paused, perSecond: s.perSecond })));
});

afterAll(async () => {
  await server.close();
});

const readyz = async () => {
  const res = await fetch(`http://127.0.0.1:${server.port}/readyz`);
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as unknown };
};

test('nothing switched: ready, nothing paused or throttled', async () => {
  expect(await readyz()).toEqual({ status: 200, type: 'application/json', body: { ready: true, control: { known: true, paused: [], throttled: {} } } });
});

test('paused and throttled switches are listed, and a paused process is still ready (200)', async () => {
  const d = defaultSwitches(NAMES);
  state = { known: true, switches: new Map([...d, ['coupon', { ...d.get('coupon')!, paused: true }], ['order', { ...d.get('order')!, perSecond: 50 }]]) };
  expect(await readyz()).toEqual({
    status: 200,
    type: 'application/json',
    body: { ready: true, control: { known: true, paused: ['coupon'], throttled: { order: 50 } } },
  });
  const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  expect(text).toMatch(/timebucket_control_paused\{what="coupon"\} 1/);
  expect(text).toMatch(/timebucket_control_paused\{what="order"\} 0/);
  expect(text).toMatch(/timebucket_control_throttle_per_second\{what="order"\} 50/);
  expect(text).toMatch(/timebucket_control_throttle_per_second\{what="coupon"\} 0/);
});

test('switches never read yet: everything reported paused, as the process behaves', async () => {
  state = { known: false, switches: defaultSwitches(NAMES) };
  expect((await readyz()).body).toEqual({ ready: true, control: { known: false, paused: ['coupon', 'order', 'scanner'], throttled: {} } });
});

test('not ready: 503 with the same body shape', async () => {
  ready = false;
  expect(await readyz()).toMatchObject({ status: 503, body: { ready: false } });
  ready = true;
});
