/**
 * Faults on the real local stack, for tests that prove recovery: the database refusing the
 * application (its account locked, its sessions killed), the broker or the second database
 * server frozen (SIGSTOP), each
 * undone by the returned function, a Kafka node or the second database server killed (SIGKILL) or
 * Kafka Connect stopped, then started again by `stackUp`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { config } from './stack';
import { stackServerName } from './stack-flavour';

const stackHome = process.env['TB_STACK_HOME'] ?? join(__dirname, '../../.stack');

/**
 * Runs SQL as root on the stack's database server `server` over its socket; returns the
 * tab-separated output. The mariadb client speaks to MySQL's socket as well (root has an empty
 * password there, which caching_sha2_password accepts over a socket).
 */
export function dbRoot(sql: string, server: 1 | 2 = 1): string {
  return execFileSync(
    'mariadb',
    ['--no-defaults', '--protocol=socket', `--socket=${join(stackHome, `run/${stackServerName(server)}.sock`)}`, '-uroot', '-N', '-e', sql],
    {
      encoding: 'utf8',
    },
  );
}

/** Locks the application's account and kills its sessions: to it, the database is down. */
export function lockOutApplication(): () => void {
  const user = config.db.user;
  dbRoot(`ALTER USER '${user}'@'%' ACCOUNT LOCK; ALTER USER '${user}'@'localhost' ACCOUNT LOCK;`);
  const ids = dbRoot(`SELECT id FROM information_schema.PROCESSLIST WHERE USER = '${user}'`)
    .split('\n')
    .filter((l) => l.trim() !== '');
  for (const id of ids) {
    try {
      dbRoot(`KILL CONNECTION ${id}`);
    } catch {
      // Gone already.
    }
  }
  return () => dbRoot(`ALTER USER '${user}'@'%' ACCOUNT UNLOCK; ALTER USER '${user}'@'localhost' ACCOUNT UNLOCK;`);
}

/** Kills Kafka node `node` (1-based) with SIGKILL, as a crashed host would go. */
export function killKafkaNode(node: number): void {
  const name = node === 1 ? 'kafka' : `kafka-${node}`;
  process.kill(Number(readFileSync(join(stackHome, `run/${name}.pid`), 'utf8').trim()), 'SIGKILL');
}

/**
 * Starts whatever part of the stack is not running (idempotent) and waits until all is healthy:
 * a killed Kafka node, Kafka Connect, the second database server.
 */
export function stackUp(): void {
  execFileSync('bash', [join(__dirname, '../../stack/stack.sh'), 'up'], { stdio: 'ignore', timeout: 180_000 });
}

/**
 * Kills the second database server with SIGKILL, as a crashed host would go: its clients see
 * their connections drop, with no orderly shutdown. Resolves once the process is gone, so
 * `stackUp` then starts it again (with its data: InnoDB's crash recovery) rather than finding it
 * still running. Only server 2: the first is the one every other test uses.
 */
export async function stopDatabaseServer(server: 2): Promise<void> {
  await stopProcess(stackServerName(server), 'SIGKILL', `database server ${server}`, 30_000);
}

/** Stops the schema registry (SIGTERM) and waits until it is gone; `stackUp` starts it again. */
export async function stopRegistry(): Promise<void> {
  await stopProcess('registry', 'SIGTERM', 'the registry', 60_000);
}

/** Freezes the broker process (requests hang, then time out); the returned function thaws it. */
export function freezeKafka(): () => void {
  const pid = Number(readFileSync(join(stackHome, 'run/kafka.pid'), 'utf8').trim());
  process.kill(pid, 'SIGSTOP');
  return () => process.kill(pid, 'SIGCONT');
}

/**
 * Freezes the second database server (SIGSTOP): it neither answers nor refuses, as a hung host
 * or a network that drops packets; its clients' statements wait. The returned function thaws it.
 */
export function freezeDatabaseServer(server: 2): () => void {
  const pid = Number(readFileSync(join(stackHome, `run/${stackServerName(server)}.pid`), 'utf8').trim());
  process.kill(pid, 'SIGSTOP');
  return () => process.kill(pid, 'SIGCONT');
}

/** Stops Kafka Connect (CDC down) as an orderly shutdown would; `stackUp` starts it again. */
export async function stopConnect(): Promise<void> {
  await stopProcess('connect', 'SIGTERM', 'Kafka Connect', 60_000);
}

/** Sends `signal` to the stack's process `name` (run/<name>.pid) and waits, bounded, until it is gone. */
async function stopProcess(name: string, signal: NodeJS.Signals, label: string, timeoutMs: number): Promise<void> {
  const pid = Number(readFileSync(join(stackHome, `run/${name}.pid`), 'utf8').trim());
  process.kill(pid, signal);
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`${label} (pid ${pid}) still running ${timeoutMs / 1000} s after ${signal}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
