/**
 * Faults on the real local stack, for tests that prove recovery: the database refusing the
 * application (its account locked, its sessions killed), the broker frozen (SIGSTOP), each
 * undone by the returned function, and a Kafka node killed (SIGKILL) then started again.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { config } from './stack';

const stackHome = process.env['TB_STACK_HOME'] ?? join(__dirname, '../../.stack');

/** Runs SQL as the stack's root over its socket; returns the tab-separated output. */
export function mariadbRoot(sql: string): string {
  return execFileSync('mariadb', ['--no-defaults', '--protocol=socket', `--socket=${join(stackHome, 'run/mariadb.sock')}`, '-uroot', '-N', '-e', sql], { encoding: 'utf8' });
}

/** Locks the application's account and kills its sessions: to it, the database is down. */
export function lockOutApplication(): () => void {
  const user = config.db.user;
  mariadbRoot(`ALTER USER '${user}'@'%' ACCOUNT LOCK; ALTER USER '${user}'@'localhost' ACCOUNT LOCK;`);
  const ids = mariadbRoot(`SELECT id FROM information_schema.PROCESSLIST WHERE USER = '${user}'`).split('\n').filter((l) => l.trim() !== '');
  for (const id of ids) {
    try {
      mariadbRoot(`KILL CONNECTION ${id}`);
    } catch {
      // Gone already.
    }
  }
  return () => mariadbRoot(`ALTER USER '${user}'@'%' ACCOUNT UNLOCK; ALTER USER '${user}'@'localhost' ACCOUNT UNLOCK;`);
}

/** Kills Kafka node `node` (1-based) with SIGKILL, as a crashed host would go. */
export function killKafkaNode(node: number): void {
  const name = node === 1 ? 'kafka' : `kafka-${node}`;
  process.kill(Number(readFileSync(join(stackHome, `run/${name}.pid`), 'utf8').trim()), 'SIGKILL');
}

/** Starts whatever part of the stack is not running (idempotent) and waits until all is healthy. */
export function stackUp(): void {
  execFileSync('bash', [join(__dirname, '../../stack/stack.sh'), 'up'], { stdio: 'ignore', timeout: 180_000 });
}

/** Freezes the broker process (requests hang, then time out); the returned function thaws it. */
export function freezeKafka(): () => void {
  const pid = Number(readFileSync(join(stackHome, 'run/kafka.pid'), 'utf8').trim());
  process.kill(pid, 'SIGSTOP');
  return () => process.kill(pid, 'SIGCONT');
}
