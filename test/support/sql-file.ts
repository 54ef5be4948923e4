/** Runs a file of DDL statements (one per `;` at a line's end, `--` comments skipped): a team's own tables for a test. */
import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';

export async function createTablesFrom(db: Knex, path: string): Promise<void> {
  const text = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n');
  for (const statement of text
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0))
    await db.raw(statement);
}
