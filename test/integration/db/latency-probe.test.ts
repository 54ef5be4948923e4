/**
 * The pacer's latency probe (db/latency-probe.ts) against the stack's server 1, through a proxy
 * the test holds: a database that answers gives samples several times a second from the probe's
 * own thread; one whose answers are held back for a while gives samples as late as the hold (each
 * counted from when it was due to go, so the stall shows as slow answers, not fewer of them).
 *
 * @lane isolated
 */
import { loadConfig } from '../../../src/config';
import { latencyProbe } from '../../../src/db/latency-probe';
import type { Component } from '../../../src/runtime/lifecycle';
import { startFreezableProxy, type FreezableProxy } from '../../support/freezable-proxy';
import { logger } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

let proxy: FreezableProxy;
let probe: Component | undefined;
const samples: number[] = [];

beforeAll(async () => {
  const config = loadConfig(process.env);
  proxy = await startFreezableProxy({ host: config.db.host, port: config.db.port });
  probe = latencyProbe({
    databases: { main: { ...config.db, host: '127.0.0.1', port: proxy.port } },
    intervalMs: 50,
    timeoutMs: 20_000,
    onSample: (database, ms) => {
      expect(database).toBe('main');
      samples.push(ms);
    },
    logger,
  });
  await probe.start();
});

afterAll(async () => {
  await probe?.stop();
  await proxy?.close();
});

test('a database that answers gives quick samples, several a second, from the probe thread', async () => {
  await waitFor('ten samples', () => samples.length >= 10 || undefined, { timeoutMs: 20_000 });
  const sorted = [...samples].sort((a, b) => a - b);
  expect(sorted[0]).toBeGreaterThan(0);
  // A loopback SELECT 1 on an idle server: well under the held answers below.
  expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(250);
});

test('answers held back for a while come as samples as late as the hold, not as a gap', async () => {
  await waitFor('a sample', () => samples.length > 0 || undefined, { timeoutMs: 20_000 });
  proxy.hold();
  // The stall's length (the fault itself, not a synchronisation): 1.5 s without answers.
  await new Promise((r) => setTimeout(r, 1_500));
  const before = samples.length;
  proxy.release();
  // The probes scheduled during the hold (one each 50 ms) all answer now, the first ~1.5 s late.
  await waitFor('the held probes', () => samples.length >= before + 10 || undefined, { timeoutMs: 20_000 });
  const late = samples.slice(before, before + 10);
  expect(Math.max(...late)).toBeGreaterThanOrEqual(1_000);
  expect(late.filter((ms) => ms >= 500).length).toBeGreaterThanOrEqual(5);
});
