/**
 * The local stack's processes (MariaDB, Kafka, Connect, the registry), from the pid files
 * `stack/stack.sh` keeps in $TB_STACK_HOME/run. Read only: the bench measures them, never
 * signals them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths';

export type NamedPid = Readonly<{ name: string; pid: number }>;

export function stackProcesses(): NamedPid[] {
  const dir = join(process.env['TB_STACK_HOME'] ?? join(repoRoot, '.stack'), 'run');
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.pid'))
      .sort();
  } catch {
    return [];
  }
  const byPid = new Map<number, string>();
  for (const file of files) {
    const pid = Number(readFileSync(join(dir, file), 'utf8').trim());
    const name = file.replace(/\.pid$/, '');
    // One process may have two pid files (mariadb.pid, mariadbd.own.pid): keep the plain name.
    if (Number.isInteger(pid) && pid > 0 && (!byPid.has(pid) || name.length < byPid.get(pid)!.length)) byPid.set(pid, name);
  }
  return [...byPid].map(([pid, name]) => ({ name, pid }));
}
