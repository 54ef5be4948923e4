// A process that moves one entity's archive, page after page, pass after pass, until it is
// killed: test/integration/archive/archive-crash.test.ts kills it with SIGKILL at moments of its
// own choosing and checks that every row is in exactly one of the two tables. It runs the built
// mover (dist/, as `make test-integration` builds it) against TB_DB_NAME of the environment.
//
// Usage: node test/support/archive-child.js <entities file> <page size>
const { readFileSync } = require('node:fs');
const { loadConfig } = require('../../dist/config');
const { createDb } = require('../../dist/db/knex');
const { parseEntityFile } = require('../../dist/core/entity-file');
const { archivePage, archivedColumns } = require('../../dist/archive/sql/archive-page');
const { readTableSchema } = require('../../dist/db/sql/read-table-schema');
const { readDbNow } = require('../../dist/db/sql/read-db-now');

async function main() {
  const [file, pageSize] = process.argv.slice(2);
  const catalogue = parseEntityFile(readFileSync(file, 'utf8'), file);
  const entity = catalogue.entities.find((e) => e.archive !== null);
  const { hot, archive } = entity.archive.tables[0];
  const db = createDb(loadConfig(process.env).db);
  const tables = await readTableSchema(db, [hot.table, archive.table]);
  const page = archivePage(entity, entity.archive, hot, archive, archivedColumns(tables.get(hot.table), tables.get(archive.table)));
  for (;;) {
    // A pass that found nothing waits a little before the next: nothing left to move is no reason to spin.
    let found = 0;
    for (const state of entity.archive.finalStates) {
      let cursor = null;
      for (;;) {
        const { ids, next } = await page.candidates(db, state, await readDbNow(db), cursor, Number(pageSize));
        if (ids.length === 0) break;
        found += ids.length;
        const moved = await page.move(db, ids);
        process.stdout.write(`${JSON.stringify(moved)}\n`);
        cursor = next;
      }
    }
    if (found === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
