/**
 * timebucket sql effective-view [--database D]
 *
 * Prints, per mapped table of the database, the view giving the status a reader should see
 * (db/sql/effective-view.ts): a wallet page or a checkout that reads it never shows an expired
 * coupon as usable, even in the seconds before the stream gets to it. The due columns' types are
 * read from information_schema, so the clock fits each column. The script starts with SET NAMES
 * utf8mb4 and writes no value as quoted text, so any client character set runs it as printed.
 */
import { ConfigError } from '../core/errors';
import { createDb } from '../db/knex';
import { readEntitySchema } from '../db/check-entity-schema';
import { EFFECTIVE_VIEW_PREAMBLE, effectiveViewSql } from '../db/sql/effective-view';
import type { SetupCommand } from './command-setup';

export function registerSqlCommands(program: SetupCommand): void {
  program
    .command('sql')
    .description('SQL for readers of the mapped tables')
    .command('effective-view')
    .description('print per table a view with effective_status: a due row in a from-state reads as its transition’s to-state')
    .option('--database <name>', "the entities file's database whose tables it covers", 'main')
    .actionWith({ uses: ['db', 'entities'], logTo: 'stderr' }, async ({ config, catalogue, logger }, opts: { database: string }) => {
      const target = config.databases[opts.database];
      if (target === undefined) {
        const problem = `no database '${opts.database}' is configured (TB_DATABASES)`;
        throw new ConfigError(problem, { problems: [problem] });
      }
      const db = createDb(target, { logger });
      try {
        const schema = await readEntitySchema({ [opts.database]: db }, catalogue, opts.database);
        process.stdout.write(`${EFFECTIVE_VIEW_PREAMBLE}\n\n`);
        for (const entity of catalogue.entities) {
          for (const location of entity.locations.filter((l) => l.database === opts.database)) {
            const table = schema.get(location.key);
            if (table === undefined) {
              const problem = `table ${location.table} (${entity.name}) does not exist in ${target.database}`;
              throw new ConfigError(problem, { problems: [problem] });
            }
            const dueTypes = new Map(entity.transitions.map((t) => [t.name, table.columns.get(t.due.column)?.dataType ?? 'datetime']));
            process.stdout.write(`${effectiveViewSql(entity, location, dueTypes)}\n\n`);
          }
        }
      } finally {
        await db.destroy();
      }
    });
}
