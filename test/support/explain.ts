/**
 * A statement's plan as EXPLAIN FORMAT=JSON prints it, in the shape both servers share: MySQL 9
 * prints JSON format version 2 by default (no query_block), so on MySQL the session asks for
 * version 1 first, on the connection that runs the EXPLAIN (a transaction holds it). A locking
 * read is explained without its FOR UPDATE (the plan is the same).
 */
import type { Knex } from 'knex';
import { stackFlavour } from './stack-flavour';

export async function explainJson(db: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[]): Promise<string> {
  const explain = `EXPLAIN FORMAT=JSON ${sql.replace(/ FOR UPDATE$/, '')}`;
  const run = async (conn: Knex | Knex.Transaction) => {
    if (stackFlavour() === 'mysql') await conn.raw('SET SESSION explain_json_format_version = 1');
    const [[row]] = (await conn.raw(explain, bindings as Knex.RawBinding[])) as [[{ EXPLAIN: string }]];
    return row.EXPLAIN;
  };
  return stackFlavour() === 'mysql' && !(db as Knex.Transaction).isTransaction ? db.transaction(run) : run(db);
}

/** The plan sorts its rows (a filesort), in either server's words. */
export const FILESORT = /"filesort"|"using_filesort":\s*true/;

/** The plan's first table node, wherever the server nests it (MariaDB under nested_loop, MySQL under ordering_operation, or at query_block). */
export function firstTableOf(plan: string): Record<string, unknown> | undefined {
  const visit = (node: unknown): Record<string, unknown> | undefined => {
    if (node === null || typeof node !== 'object') return undefined;
    const o = node as Record<string, unknown>;
    if (o['table'] !== undefined && typeof o['table'] === 'object') return o['table'] as Record<string, unknown>;
    for (const child of Object.values(o)) {
      const found = visit(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(JSON.parse(plan));
}
