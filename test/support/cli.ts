/** Runs the built `timebucket` command (dist/) as a child process, as an operator would. */
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const cliPath = join(__dirname, '../../dist/cli/main.js');

export type CliRun = Readonly<{
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
  stdout: () => string;
}>;

export function spawnCli(args: readonly string[], env: Readonly<Record<string, string>>): CliRun {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run \`make build\` (make test does) before the integration tests`);
  const child = spawn(process.execPath, [cliPath, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stderr: () => err, stdout: () => out };
}

const handedOut = new Set<number>();
/** Each lane of test/support/run-lanes.js draws from its own 3,000 ports: lanes run side by side. */
// The cluster stack's lanes below them (cluster, then mysql beside mysql-isolated, then
// mysql-exclusive); the development stack's ports among them (13306, 18081 …) are held, and the
// bind check skips them.
const LANE_PORTS: Readonly<Record<string, number>> = {
  captured: 20_000,
  'captured-2': 23_000,
  isolated: 26_000,
  exclusive: 29_000,
  cluster: 14_000,
  mysql: 14_000,
  'mysql-isolated': 17_000,
  'mysql-exclusive': 14_000,
};
const portBase = LANE_PORTS[process.env['TB_TEST_LANE'] ?? 'captured'] ?? 20_000;

/**
 * A port for a child's ops endpoint, never the same twice in a test file, below the kernel's
 * ephemeral range (32768 and up, which outgoing connections draw from), drawn from the lane's
 * range, and free when drawn: a port some long-running listener already holds (the cluster
 * stack's, a system service's) is skipped rather than handed to a child that would fail to bind.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = portBase + Math.floor(Math.random() * 3_000);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The process has not exited yet. */
export function isRunning(r: CliRun): boolean {
  return r.child.exitCode === null && r.child.signalCode === null;
}

/** Kills every run still alive: a test file's clean-up, so no child outlives it. */
export function killRunning(runs: readonly CliRun[]): void {
  for (const r of runs) if (isRunning(r)) r.child.kill('SIGKILL');
}

/** Every non-empty line the process wrote, stdout then stderr. */
export function outputLines(r: CliRun): string[] {
  return `${r.stdout()}\n${r.stderr()}`.split('\n').filter((l) => l.length > 0);
}

/** GET a child's ops endpoint (/healthz, /readyz, /metrics): its status and body, or undefined while nothing answers. */
export async function httpStatus(port: number, path: string): Promise<{ code: number; body: string } | undefined> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`).catch(() => undefined);
  return res === undefined ? undefined : { code: res.status, body: await res.text() };
}
