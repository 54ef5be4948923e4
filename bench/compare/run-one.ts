/**
 * One contender on one workload, measured:
 *
 *   start the contender (its processes, ready)      ─┐ its processes' CPU: their whole life
 *   plan T, write the rows (raw is told their ids)   │ the stack's CPU: deltas over all of it
 *   follow its progress (cheap: see contender.ts)    │ rows examined: from the rows being in
 *   → every row transitioned (or events seen)       ─┘ (hot, mixed) or the writer's start (steady)
 *   stop it; read the figures back from the database (figures.ts)
 *
 * A run that fails (a process dies, no progress for STALL_S, not done in TIMEOUT_S) is recorded
 * with its error and whatever figures the database has; the next run goes ahead.
 */
import type { Config } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createBenchDatabase } from '../lib/bench-database';
import { binlogBytesWritten, dbNowMs, readsBetween, rowsReadByCounter } from '../lib/db-server';
import { log, sleep } from '../lib/log';
import { cpuSeconds, memoryMb } from '../lib/proc';
import { BENCH_PROCESS, phaseCost, takeSample, type CostSample, type RunCost } from './cost';
import type { NamedPid } from '../lib/stack-processes';
import { stackProcesses } from '../lib/stack-processes';
import type { Contender, RunningContender } from './contender';
import { lastOutboxId, readFigures, RunFigures } from './figures';
import { createSchemaRegistry } from '../../src/publish/schema-registry';
import type { BenchParams, WorkloadName } from './params';
import { RunResult, ProcessFigures, resultOf } from './run-result';
import { planWorkload, verifyIds, WorkloadPlan, WriteReport } from './workload';
import { settle } from '../lib/settle';
import { ForegroundProcess } from '../lib/foreground-process';
import { ReplicaWatch } from '../lib/replica-watch';
import { createDb } from '../../src/db/knex';

export type Harness = Readonly<{ params: BenchParams; config: Config; serverDb: Db; logDir: string }>;

export async function runOne(h: Harness, workload: WorkloadName, contender: Contender, round = 1): Promise<RunResult> {
  const which = round === 0 ? ' (warm-up, not counted)' : h.params.runs > 1 ? ` (round ${round} of ${h.params.runs})` : '';
  log(`── ${workload} × ${contender.name}${which}`);
  const settleNotes = await settleBefore(h);
  const target = await createBenchDatabase(h.config, `${workload}_${contender.name}`);
  let running: RunningContender | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= running?.stop() ?? Promise.resolve());
  let plan: WorkloadPlan | undefined;
  let written: WriteReport | undefined;
  const outboxBefore = await lastOutboxId(target.db);
  const registry = createSchemaRegistry(h.config.registry);
  const decode = async (value: Buffer) => (await registry.decode(value)) as Record<string, unknown>;
  const stack = stackProcesses();
  const stackCpuBefore = stack.map((p) => cpuSeconds(p.pid));
  const samples: Moments = {};
  // isolation: the application's own traffic on the same tables, alone first, then beside the run.
  const foreground = workload === 'isolation' ? await foregroundAlone(h, target.name) : undefined;
  let replica: ReplicaWatch | undefined;
  try {
    running = await contender.start({ params: h.params, config: h.config, workload, db: target.db, dbName: target.name, logPrefix: `${h.logDir}/${workload}` });
    const alignToMs = contender.name === 'poller' ? h.params.pollIntervalS * 1000 : undefined;
    const planned = planWorkload(workload, h.params, { nowMs: await dbNowMs(target.db), leadS: leadSeconds(h.params, workload, contender), alignToMs });
    plan = planned;
    const total = plan.expected.coupon + plan.expected.order;
    log(
      `${total} transitions due ${plan.name === 'steady' ? `from ${iso(plan.startRefMs)} to ${iso(plan.endRefMs)}` : `at T = ${iso(plan.startRefMs)}`} (${target.name})`,
    );
    let readsBefore = plan.name === 'steady' ? await rowsReadByCounter(h.serverDb) : {};
    let binlogBefore = plan.name === 'steady' ? await binlogBytesWritten(h.serverDb) : 0;
    const c = running;
    written = await plan.write(target.db, (rows) => c.onRows(rows));
    // The mixed workload links orders and coupons with an UPDATE: its reads are the writer's, not the contender's.
    if (plan.name !== 'steady') {
      readsBefore = await rowsReadByCounter(h.serverDb);
      binlogBefore = await binlogBytesWritten(h.serverDb);
    }
    const notes: string[] = [...settleNotes];
    if (plan.name !== 'steady' && written.doneAtMs > plan.startRefMs)
      notes.push(`rows still being written ${((written.doneAtMs - plan.startRefMs) / 1000).toFixed(1)} s after T: raise LEAD_S`);
    if (written.maxWriterLagMs > 1_000) notes.push(`the steady writer fell up to ${(written.maxWriterLagMs / 1000).toFixed(1)} s behind its schedule`);
    // The harness itself (BENCH_PROCESS): the measuring instrument, shown apart from the machine's
    // unaccounted CPU. For the stream it reads every event back from Kafka, as a subscriber would.
    const pids = [...running.children.map((c) => ({ name: c.name, pid: c.process.pid ?? -1 })), ...stack, { name: BENCH_PROCESS, pid: process.pid }];
    // Started after the rows are in: its inserts would break the run's consecutive ids (verifyIds).
    foreground?.start('before T');
    replica = foreground === undefined ? undefined : replicaWatchOf(h, target, plan.tag);
    replica?.start();
    await waitForProgress(h.params, running, total, plan, { pids, samples, phase: (name) => foreground?.phase(name) });
    const foregroundReport = (await foreground?.stop()) ?? null;
    const pacing = running.pacing?.() ?? null;
    const replicaReport = (await replica?.stop()) ?? null;
    const reads = readsBetween(readsBefore, await rowsReadByCounter(h.serverDb));
    const binlogBytes = (await binlogBytesWritten(h.serverDb)) - binlogBefore;
    const processes = measureProcesses(running, stack, stackCpuBefore);
    const events = running.events?.() ?? null;
    if (events !== null && events.foreign > 0) {
      notes.push(
        `the run's event topics also hold ${events.foreign} events of rows this run did not write (another writer on ${target.name} with the run's topology)`,
      );
    }
    await stop();
    await verifyIds(target.db, plan.tag, written);
    const figures = await readFigures(target.db, plan, written, outboxBefore, decode);
    const cost = runCost(samples, figures.transitions, figures.lastTransitionAtMs, events?.lastTimestampMs ?? null);
    return resultOf({
      workload,
      contender: contender.name,
      round,
      database: target.name,
      plan,
      written,
      figures,
      events,
      reads,
      binlogBytes,
      processes,
      notes,
      error: null,
      cost,
      foreground: foregroundReport,
      replica: replicaReport,
      pacing,
    });
  } catch (err) {
    log(`${workload} × ${contender.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    const processes = running === undefined ? [] : measureProcesses(running, stack, stackCpuBefore);
    await stop().catch(() => undefined);
    const foregroundReport = (await foreground?.stop().catch(() => null)) ?? null;
    const figures: RunFigures | null = plan && written ? await readFigures(target.db, plan, written, outboxBefore, decode).catch(() => null) : null;
    return resultOf({
      workload,
      contender: contender.name,
      round,
      database: target.name,
      plan,
      written,
      figures,
      events: running?.events?.() ?? null,
      reads: null,
      binlogBytes: null,
      processes,
      notes: [],
      error: err instanceof Error ? err.message : String(err),
      foreground: foregroundReport,
    });
  } finally {
    await stop().catch(() => undefined);
    await foreground?.stop().catch(() => undefined);
    await foreground?.close().catch(() => undefined);
    await replica?.close().catch(() => undefined);
    await target.drop().catch((err: unknown) => log(`could not drop ${target.name}: ${String(err)}`));
  }
}

/** The wait for a quiet machine (SETTLE_S, lib/settle.ts); a note for the run when it never came. */
async function settleBefore(h: Harness): Promise<string[]> {
  if (h.params.settleS <= 0) return [];
  const s = await settle(h.serverDb, { maxS: h.params.settleS });
  const state = [
    s.idleShare === null ? '' : `${Math.round(s.idleShare * 100)} % idle`,
    s.historyLength === null ? '' : `InnoDB history ${s.historyLength}`,
    s.dirtyShare === null ? '' : `${(s.dirtyShare * 100).toFixed(1)} % of the buffer pool dirty`,
  ]
    .filter((part) => part !== '')
    .join(', ');
  log(`${s.quiet ? 'quiet' : 'still busy'} after ${s.waitedS} s (${state})`);
  return s.quiet ? [] : [`the machine was still busy when the run started, after waiting ${s.waitedS} s (SETTLE_S): ${state}`];
}

/**
 * Seconds from planning to T. The stream must write the rows and let CDC schedule them first
 * (about 4,000 rows a second, plus 30 s); the others only need the rows written. LEAD_S overrides both.
 */
function leadSeconds(params: BenchParams, workload: WorkloadName, contender: Contender): number {
  if (params.leadS !== undefined) return params.leadS;
  const rows = workload === 'mixed' ? Math.ceil(params.n * 1.125) : params.n;
  return contender.needsCdc ? Math.ceil(rows / 4_000) + 30 : Math.ceil(rows / 10_000) + 5;
}

/** Until the contender reports every transition (the stream: every event). A dead process, a stall or the timeout fails the run. */
async function waitForProgress(
  params: BenchParams,
  running: RunningContender,
  total: number,
  plan: WorkloadPlan,
  cost: Readonly<{ pids: readonly NamedPid[]; samples: Moments; phase?: (name: string) => void }>,
): Promise<void> {
  const started = Date.now();
  const { samples } = cost;
  let lastTransitionsRead = 0;
  let last = -1;
  let lastChange = Date.now();
  let lastLog = 0;
  for (;;) {
    const seen = running.progress();
    if (samples.t === undefined && Date.now() >= plan.startRefMs) {
      samples.t = takeSample(cost.pids);
      cost.phase?.('drain');
    }
    // The last transition: the contender's progress, or for the stream its expirers' counters.
    if (samples.t !== undefined && samples.lastTransition === undefined) {
      if (running.transitions === undefined) {
        if (seen >= total) samples.lastTransition = lastTransition(cost);
      } else if (Date.now() - lastTransitionsRead >= 500) {
        // Twice a second: each read is a /metrics scrape of every expirer, which costs it CPU.
        lastTransitionsRead = Date.now();
        if ((await running.transitions().catch(() => 0)) >= total) samples.lastTransition = lastTransition(cost);
      }
    }
    if (seen >= total) {
      samples.lastEvent = takeSample(cost.pids);
      return;
    }
    const dead = running.children.find((c) => c.exit() !== undefined);
    if (dead) throw new Error(`${dead.name} exited (code ${dead.exit()!.code}, signal ${dead.exit()!.signal}) at ${seen}/${total}`);
    const now = Date.now();
    if (seen !== last) [last, lastChange] = [seen, now];
    // Nothing is expected before the last row is due: a stall counts from then at the earliest.
    const stalledMs = now - Math.max(lastChange, plan.endRefMs);
    if (stalledMs > params.stallS * 1000) throw new Error(`no progress for ${params.stallS} s at ${seen}/${total}${eventsSeen(running)}`);
    if (now - started > params.timeoutS * 1000) throw new Error(`not done within ${params.timeoutS} s: ${seen}/${total}`);
    if (now - lastLog > 10_000) {
      lastLog = now;
      log(`${seen}/${total}`);
    }
    await sleep(100);
  }
}

function measureProcesses(running: RunningContender, stack: ReturnType<typeof stackProcesses>, stackCpuBefore: Array<number | null>): ProcessFigures[] {
  const own = running.children.map((c) => {
    const pid = c.process.pid ?? -1;
    const mem = memoryMb(pid);
    return { name: c.name, kind: 'contender' as const, pid, cpu_seconds: cpuSeconds(pid), peak_rss_mb: mem?.peakRssMb ?? null, rss_mb: mem?.rssMb ?? null };
  });
  const shared = stack.map((p, i) => {
    const now = cpuSeconds(p.pid);
    const before = stackCpuBefore[i];
    const mem = memoryMb(p.pid);
    return {
      name: p.name,
      kind: 'stack' as const,
      pid: p.pid,
      cpu_seconds: now === null || before === null || before === undefined ? null : Math.round((now - before) * 100) / 100,
      peak_rss_mb: mem?.peakRssMb ?? null,
      rss_mb: mem?.rssMb ?? null,
    };
  });
  return [...own, ...shared];
}

/** The sample at the last transition, where the foreground's drain phase ends. */
function lastTransition(cost: Readonly<{ pids: readonly NamedPid[]; phase?: (name: string) => void }>): CostSample {
  cost.phase?.('after');
  return takeSample(cost.pids);
}

/**
 * The foreground (lib/foreground.ts, in a process of its own: lib/foreground-process.ts) on the run's database, its users' wallets seeded, run alone
 * for FOREGROUND_ALONE_S before the contender starts: its baseline, in phase 'alone'. Returned
 * stopped, to start again beside the run.
 */
async function foregroundAlone(h: Harness, dbName: string): Promise<ForegroundProcess> {
  const { rate, users, aloneS } = h.params.foreground;
  const foreground = new ForegroundProcess({ dbName, rate, users, userBase: FOREGROUND_USER_BASE, logFile: `${h.logDir}/isolation-foreground.log` });
  await foreground.seed(5).catch(async (err: unknown) => {
    await foreground.close();
    throw err;
  });
  log(`foreground: ${rate} requests/s over ${users} users, alone for ${aloneS} s`);
  foreground.start('alone');
  await sleep(aloneS * 1000);
  await foreground.stop();
  return foreground;
}

/**
 * isolation, when the stack runs its replica (TB_STACK_REPLICA=1): what a reader of it sees
 * (lib/replica-watch.ts), on the run's database there, through the owner's account (replicated).
 */
function replicaWatchOf(h: Harness, target: { name: string; db: Db }, tag: number): ReplicaWatch | undefined {
  if (process.env['TB_STACK_REPLICA'] !== '1') return undefined;
  const port = Number(process.env['TB_STACK_REPLICA_PORT'] ?? h.config.db.port + 2);
  return new ReplicaWatch({ primary: target.db, replica: createDb({ ...h.config.db, port, database: target.name }), tag });
}

/** The foreground's users: far from any run's tag (1e9 … 2e9), so a run's rows are still told apart by user_id. */
const FOREGROUND_USER_BASE = 3_000_000_000;

/** CPU samples at T, at the last transition seen and at the last event seen (cost.ts). */
type Moments = { t?: CostSample; lastTransition?: CostSample; lastEvent?: CostSample };

function runCost(m: Moments, transitions: number, lastTransitionAtMs: number | null, lastEventAtMs: number | null): RunCost {
  const publishes = m.lastEvent !== undefined && m.lastTransition !== undefined && lastEventAtMs !== null;
  return {
    expire: phaseCost(m.t, m.lastTransition, transitions),
    publish: publishes ? phaseCost(m.lastTransition, m.lastEvent, transitions) : null,
    publish_tail_s: lastEventAtMs === null || lastTransitionAtMs === null ? null : Math.round(lastEventAtMs - lastTransitionAtMs) / 1000,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * What the stream's event follower read, for a stall's message: events of rows this run did not
 * write (their ids unknown to it) are not progress, and their count tells a follower that read
 * the events but could not place them from one that read nothing; a consumer kafkajs gave up on
 * reads nothing more, and says why.
 */
function eventsSeen(running: Pick<RunningContender, 'events'>): string {
  const events = running.events?.();
  if (events === undefined) return '';
  const crash = events.crashed === undefined ? '' : `; its consumer crashed for good: ${events.crashed}`;
  return ` (events read: ${events.count} of this run's rows, ${events.foreign} of rows it did not write, ${events.records} records in all${crash})`;
}
