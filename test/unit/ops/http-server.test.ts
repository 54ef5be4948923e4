import { createLogger } from '../../../src/ops/logger';
import { createMetrics } from '../../../src/ops/metrics';
import { startOpsServer, OpsServer } from '../../../src/ops/http-server';

let server: OpsServer;
let ready = false;
let health = { ok: true, problems: [] as string[] };
const metrics = createMetrics({ entities: ['coupon', 'order'] });

beforeAll(async () => {
  server = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    registry: metrics.registry,
    isReady: () => ready,
    health: () => health,
    logger: createLogger('silent'),
  });
});

afterAll(async () => {
  await server.close();
});

const get = (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`);

test('/healthz follows the health check and names the problems', async () => {
  expect((await get('/healthz')).status).toBe(200);
  health = { ok: false, problems: ['consumer of group g.expirer made no progress for 91000 ms'] };
  const res = await get('/healthz');
  expect(res.status).toBe(503);
  expect(await res.text()).toBe('unhealthy\nconsumer of group g.expirer made no progress for 91000 ms\n');
  health = { ok: true, problems: [] };
  expect((await get('/healthz')).status).toBe(200);
});

test('/readyz follows readiness', async () => {
  ready = false;
  expect((await get('/readyz')).status).toBe(503);
  ready = true;
  expect((await get('/readyz')).status).toBe(200);
});

test('/metrics serves the registry in Prometheus text', async () => {
  metrics.transitions.inc({ entity: 'coupon', path: 'stream' }, 3);
  metrics.trackHold('expirer', () => ({ heldPartitions: 2, inMemory: 5, largestPartitionInMemory: 3, dueLag: 7 }));
  const res = await get('/metrics');
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toMatch(/timebucket_transitions_total\{entity="coupon",path="stream"\} 3/);
  expect(text).toMatch(/timebucket_due_lag_messages\{stage="expirer"\} 7/);
  expect(text).toMatch(/timebucket_held_partitions\{stage="expirer"\} 2/);
});

test('unknown paths are 404', async () => {
  expect((await get('/nope')).status).toBe(404);
});

test("the entity series start at 0 for the catalogue's entities, whatever they are named", async () => {
  const m = createMetrics({ entities: ['ticket', 'voucher'] });
  const text = await m.registry.metrics();
  expect(text).toMatch(/timebucket_transitions_total\{entity="ticket",path="scanner"\} 0/);
  expect(text).toMatch(/timebucket_scanner_caught_total\{entity="voucher"\} 0/);
  expect(text).toMatch(/timebucket_scanner_page_failures_total\{entity="ticket"\} 0/);
  expect(text).not.toMatch(/entity="coupon"/);
});
