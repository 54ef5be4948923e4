/** /readyz of `timebucket run`: what makes it ready, and the body naming what does not. */
import { processReadiness, type ReadinessSource } from '../../../src/cli/readiness';
import type { DatabaseState } from '../../../src/db/database-watch';
import { defaultSwitches, summarize, switchNamesOf } from '../../../src/control/switch-state';

const T = Date.parse('2026-12-04T10:00:00.000Z');
const up: DatabaseState = { answering: true, checked: true, sinceMs: T };

function source(databases: Record<string, DatabaseState>, healthy = true): ReadinessSource {
  return {
    health: () => ({ ok: healthy }),
    control: () => summarize({ known: true, switches: defaultSwitches(switchNamesOf(['coupon'])) }),
    databases: () => databases,
  };
}

const joined = { joined: true, stopping: false };

test('ready when joined, healthy, not stopping and every database answers with its tables checked', () => {
  expect(processReadiness(source({ main: up, shop_b: up }), joined).ready).toBe(true);
  expect(processReadiness(source({ main: up }), { joined: false, stopping: false }).ready).toBe(false);
  expect(processReadiness(source({ main: up }), { joined: true, stopping: true }).ready).toBe(false);
  expect(processReadiness(source({ main: up }, false), joined).ready).toBe(false);
});

test('a database that does not answer, or answers with its tables not yet checked, makes it not ready and is named', () => {
  const down: DatabaseState = { answering: false, checked: true, sinceMs: T + 1_000, error: 'no answer within 5000 ms' };
  const r = processReadiness(source({ main: up, shop_b: down }), joined);
  expect(r.ready).toBe(false);
  expect(r.details['databases']).toEqual({
    main: { answering: true, checked: true, since: '2026-12-04T10:00:00.000Z' },
    shop_b: { answering: false, checked: true, since: '2026-12-04T10:00:01.000Z', error: 'no answer within 5000 ms' },
  });
  expect(processReadiness(source({ main: up, shop_b: { answering: true, checked: false, sinceMs: T } }), joined).ready).toBe(false);
});

test('before start-up succeeded: not ready, saying why it is still waiting', () => {
  expect(
    processReadiness(undefined, { joined: false, stopping: false, starting: { failedAttempts: 3, error: 'connect ECONNREFUSED 127.0.0.1:3306' } }),
  ).toEqual({
    ready: false,
    details: { starting: { failedAttempts: 3, error: 'connect ECONNREFUSED 127.0.0.1:3306' } },
  });
});

test('a transition held for its first pass leaves the process ready (it serves the others) and is named with its table and why', () => {
  const held = {
    transition: 'wallet.expired',
    database: 'main',
    table: 't_wallet',
    reason: 'wallet.expired (shop.t_wallet): the first pass would transition 40 of the 50 rows',
  };
  const r = processReadiness({ ...source({ main: up }), firstPassHeld: () => [held] }, joined);
  expect(r.ready).toBe(true);
  expect(r.details['firstPassHeld']).toEqual([held]);
  expect(processReadiness(source({ main: up }), joined).details['firstPassHeld']).toEqual([]);
});

test("each database's pacer is in the body, budget-bound or not the process stays ready; unpaced shows no rate", () => {
  const pacing = new Map([
    ['main', { rate: Number.POSITIVE_INFINITY, healthRate: Number.POSITIVE_INFINITY, budgetRate: 0, state: 'healthy' as const, budgetUsed: 0 }],
    ['shop_b', { rate: 812.4, healthRate: 50, budgetRate: 812.4, state: 'budget-bound' as const, limitedBy: 'threads_running' as const, budgetUsed: 0.41234 }],
  ]);
  const r = processReadiness({ ...source({ main: up, shop_b: up }), pacing: () => pacing }, joined);
  expect(r.ready).toBe(true);
  expect(r.details['pacing']).toEqual({
    main: { state: 'healthy', limitedBy: null, rowsPerSecond: null, budgetUsed: 0 },
    shop_b: { state: 'budget-bound', limitedBy: 'threads_running', rowsPerSecond: 812, budgetUsed: 0.412 },
  });
  expect(processReadiness(source({ main: up }), joined).details['pacing']).toEqual({});
});
