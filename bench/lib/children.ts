/**
 * The contenders' processes: started with their output in a log file (and, for those whose
 * progress is read from their logs, line by line to the caller), stopped with SIGTERM and, if
 * still there after a grace period, SIGKILL. Only processes started here are ever signalled.
 */
import { ChildProcess, fork, spawn } from 'node:child_process';
import { createWriteStream, WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { deployedNodeFlags, deploymentOfRoles } from './deployed-node-flags';
import { cliPath } from './paths';
import { sleep } from './log';

export type Child = Readonly<{
  name: string;
  process: ChildProcess;
  /** Set once the process has exited, with why. */
  exit: () => { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stop: (graceMs?: number) => Promise<void>;
}>;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `timebucket run --roles <roles>`, the CLI compiled beside the bench, as it is deployed: with
 * the node flags of its deployment (deployed-node-flags.ts). BENCH_ROLE_NODE_ARGS adds node flags
 * to these processes only, e.g. to profile them:
 * `BENCH_ROLE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"` (node refuses --cpu-prof in NODE_OPTIONS).
 */
export function startRoles(name: string, roles: string, env: Env, logFile: string, onLine?: (line: string) => void): Child {
  const nodeArgs = [...deployedNodeFlags(deploymentOfRoles(roles)), ...extraNodeArgs()];
  const child = spawn(process.execPath, [...nodeArgs, cliPath, 'run', '--roles', roles], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return track(name, child, logFile, onLine);
}

/**
 * A bench worker module (compiled JS) with an IPC channel to this process. `as`: the deployment
 * whose node flags it runs with (raw runs the expirer's transactions, so the expirer's).
 */
export function forkWorker(name: string, modulePath: string, env: Env, logFile: string, as?: string): Child {
  const execArgv = as === undefined ? [] : [...deployedNodeFlags(as), ...extraNodeArgs()];
  const child = fork(modulePath, [], { env, execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  return track(name, child, logFile);
}

function extraNodeArgs(): string[] {
  return (process.env['BENCH_ROLE_NODE_ARGS'] ?? '').split(' ').filter((a) => a.length > 0);
}

function track(name: string, child: ChildProcess, logFile: string, onLine?: (line: string) => void): Child {
  const out: WriteStream = createWriteStream(logFile, { flags: 'a' });
  child.stderr!.pipe(out, { end: false });
  if (onLine) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      out.write(`${line}\n`);
      onLine(line);
    });
  } else {
    child.stdout!.pipe(out, { end: false });
  }
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const done = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );
  const stop = async (graceMs = 30_000) => {
    if (exited === undefined) {
      child.kill('SIGTERM');
      const inTime = await Promise.race([done.then(() => true), sleep(graceMs).then(() => false)]);
      if (!inTime) {
        child.kill('SIGKILL');
        await done;
      }
    }
    // Let the pipes deliver what is left before the log file closes.
    await sleep(50);
    out.end();
  };
  return { name, process: child, exit: () => exited, stop };
}

/**
 * A TCP port nothing listens on right now, for a child's /readyz. Below the kernel's ephemeral
 * range (32768 and up): a port the kernel hands out for listen(0) is one it may give the very
 * next outgoing connection of any process (the children connecting to Kafka and the database
 * while their siblings start), and the child that binds it a moment later then fails with
 * EADDRINUSE. Never the same port twice in this process.
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port) || !(await listenable(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free TCP port found in 20000..31999 after 100 tries');
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Waits until the child's /readyz answers 200 (every consumer joined its group). */
export async function waitReady(child: Child, port: number, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exit = child.exit();
    if (exit !== undefined) throw new Error(`${child.name} exited before it was ready (code ${exit.code}, signal ${exit.signal})`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${child.name} not ready within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}
