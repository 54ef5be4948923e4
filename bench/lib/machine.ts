/** What the figures were measured on, recorded with them: they mean little without it. */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';
import type { Db } from '../../src/db/knex';
import { repoRoot } from './paths';

export type MachineInfo = Readonly<{
  cores: number;
  cpu_model: string;
  ram_gb: number;
  /** The 1-minute load average when the bench started: anything above ~0 means it was not alone. */
  load_average_1m: number;
  node: string;
  kernel: string;
  database: string;
  git_commit: string | null;
}>;

export async function machineInfo(db: Db): Promise<MachineInfo> {
  const [[row]] = (await db.raw('SELECT VERSION() AS v')) as [[{ v: string }]];
  let gitCommit: string | null = null;
  try {
    // Read-only: rev-parse writes nothing.
    gitCommit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    gitCommit = null;
  }
  return {
    cores: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    ram_gb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
    node: process.version,
    kernel: release(),
    database: row.v,
    git_commit: gitCommit,
  };
}
