/**
 * Whether the connectors running on a Kafka Connect cluster capture what the entities file maps,
 * with the filter it needs: for each mapped table of the database, a RUNNING connector whose
 * table list includes it and whose expirable-change filter names the table's status column and
 * every from-state; and (outboxConnectorProblems) a RUNNING outbox connector per database. Pure:
 * the connectors come from Connect's REST API
 * (GET /connectors?expand=info&expand=status), the wanted configuration from connector-config.ts.
 */
export type ConnectorView = Readonly<{ name: string; config: Readonly<Record<string, string>>; state: string; taskStates: readonly string[] }>;

const RULE = 'predicates.notExpirable.expirable.table.';

export function connectorProblems(wanted: Readonly<Record<string, string>>, connectors: readonly ConnectorView[], database: string): string[] {
  const fix = 'register the output of `timebucket connector config` (PUT /connectors/<name>/config with --config-only)';
  const tables = (wanted['table.include.list'] ?? '').split(',').filter((t) => t.length > 0);
  const problems: string[] = [];
  for (const pattern of tables) {
    const table = pattern.slice(`${database}\\.`.length);
    // Only a connector writing under the prefix the service reads feeds it (two servers may have
    // tables of the same names; each database's connector has its own prefix).
    const prefix = wanted['topic.prefix'];
    const { ours: capturing, all } = readersOf(connectors, database, pattern, prefix);
    if (capturing.length === 0) {
      problems.push(
        `no connector captures ${database}.${table} under topic.prefix ${String(prefix)}${all.length > 0 ? `; ${described(all)} write elsewhere` : ''}: ${fix}`,
      );
      continue;
    }
    const route = routeOf(wanted, table);
    for (const c of capturing) {
      if (!running(c))
        problems.push(`connector ${c.name} captures ${database}.${table} but is ${stateOf(c)}: look at its status (GET /connectors/${c.name}/status)`);
      // A table of a set must reach the entity's topic: per-table topics are read by nothing.
      if (
        route !== undefined &&
        !Object.entries(c.config).some(
          ([k, v]) => k.endsWith('.topic.replacement') && v === route.replacement && includes(c.config[k.replace(/replacement$/, 'regex')], route.topic),
        )
      ) {
        problems.push(`connector ${c.name} does not route ${database}.${table} into ${route.replacement}: its changes go to a topic nothing reads; ${fix}`);
      }
      const column = wanted[`${RULE}${table}.column`];
      if (column === undefined) continue; // the table is not filtered at the source: nothing to compare
      const filtered =
        c.config['predicates.notExpirable.type'] === 'timebucket.connect.NotExpirableChange' &&
        c.config['transforms.onlyExpirable.predicate'] === 'notExpirable';
      const listed = (c.config['predicates.notExpirable.expirable.tables'] ?? '').split(',').map((t) => t.trim());
      if (!filtered || !listed.includes(table)) {
        problems.push(`connector ${c.name} has no expirable-change filter for ${table}: every change reaches Kafka (slower, still correct); ${fix}`);
        continue;
      }
      if (c.config[`${RULE}${table}.column`] !== column)
        problems.push(`connector ${c.name} filters ${table} on column ${String(c.config[`${RULE}${table}.column`])}, the entities file says ${column}: ${fix}`);
      const have = new Set((c.config[`${RULE}${table}.states`] ?? '').split(',').map((s) => s.trim()));
      const lacking = (wanted[`${RULE}${table}.states`] ?? '').split(',').filter((s) => !have.has(s));
      // A missing state drops the changes that make rows due: rows would be left to the scanner.
      if (lacking.length > 0)
        problems.push(
          `connector ${c.name} drops changes of ${table} into ${lacking.map((s) => JSON.stringify(s)).join(', ')}: those rows would wait for the scanner; ${fix}`,
        );
    }
  }
  return problems;
}

/**
 * Whether a RUNNING connector publishes `database`'s event_outbox the way the generated one does
 * (`wanted`: publish/outbox-connector-config.ts): Debezium's Outbox Event Router, routing each row
 * by its `topic` column with the event headers placed from its columns, under the database's
 * outbox topic.prefix. Without one, that database's events stay in its table.
 */
export function outboxConnectorProblems(
  wanted: Readonly<Record<string, string>>,
  connectors: readonly ConnectorView[],
  database: string,
  databaseName: string,
): string[] {
  const option = databaseName === 'main' ? '' : ` --database ${databaseName}`;
  const fix = `register the output of \`timebucket connector config --outbox${option}\` (PUT /connectors/<name>/config with --config-only)`;
  const prefix = wanted['topic.prefix'];
  const { ours: publishing, all } = readersOf(connectors, database, `${database}\\.event_outbox`, prefix);
  if (publishing.length === 0) {
    return [
      `no connector publishes ${database}.event_outbox under topic.prefix ${String(prefix)}${all.length > 0 ? `; ${described(all)} read it for another deployment` : ''}: its events stay in the table; ${fix}`,
    ];
  }
  const placement = 'transforms.outbox.table.fields.additional.placement';
  const router = (c: ConnectorView) =>
    c.config['transforms.outbox.type'] === wanted['transforms.outbox.type'] &&
    c.config['transforms.outbox.route.by.field'] === wanted['transforms.outbox.route.by.field'] &&
    listOf(c.config[placement]) === listOf(wanted[placement]);
  const problems: string[] = [];
  for (const c of publishing) {
    if (!running(c))
      problems.push(
        `connector ${c.name} publishes ${database}.event_outbox but is ${stateOf(c)}: its events wait in the table; look at its status (GET /connectors/${c.name}/status)`,
      );
    if (!router(c))
      problems.push(
        `connector ${c.name} reads ${database}.event_outbox without the generated Outbox Event Router (routing by topic, the event headers): subscribers would get other records; ${fix}`,
      );
  }
  return problems;
}

/** The connectors reading `pattern` (a table.include.list entry) of `database`, and of them those under `prefix` (any, when undefined). */
function readersOf(
  connectors: readonly ConnectorView[],
  database: string,
  pattern: string,
  prefix: string | undefined,
): { all: ConnectorView[]; ours: ConnectorView[] } {
  const all = connectors.filter(
    (c) => includes(c.config['table.include.list'], pattern) && c.config['database.include.list']?.split(',').includes(database) !== false,
  );
  return { all, ours: all.filter((c) => prefix === undefined || c.config['topic.prefix'] === prefix) };
}

const described = (cs: readonly ConnectorView[]) => cs.map((c) => `${c.name} (topic.prefix ${String(c.config['topic.prefix'])})`).join(', ');
const running = (c: ConnectorView) => c.state === 'RUNNING' && c.taskStates.length > 0 && c.taskStates.every((s) => s === 'RUNNING');
const stateOf = (c: ConnectorView) => `${c.state} with tasks [${c.taskStates.join(', ')}]`;
/** A comma-separated setting as a set, in a canonical form. */
const listOf = (s: string | undefined) => [...new Set((s ?? '').split(',').map((x) => x.trim()))].sort().join(',');

/** The wanted router of a table of a set: the table's own topic and the entity's it goes to. */
function routeOf(wanted: Readonly<Record<string, string>>, table: string): { topic: string; replacement: string } | undefined {
  const prefix = wanted['topic.prefix'];
  const schema = wanted['database.include.list'];
  if (prefix === undefined || schema === undefined) return undefined;
  const topic = `${prefix}.${schema}.${table}`.replace(/\./g, '\\.');
  for (const [key, regex] of Object.entries(wanted)) {
    if (!key.startsWith('transforms.') || !key.endsWith('.topic.regex') || !includes(regex, topic)) continue;
    const replacement = wanted[key.replace(/regex$/, 'replacement')];
    if (replacement !== undefined) return { topic, replacement };
  }
  return undefined;
}

/** Debezium's table.include.list is a list of regular expressions matched against <db>.<table>. */
function includes(list: string | undefined, wanted: string): boolean {
  const table = wanted.replace(/\\\./g, '.');
  return (list ?? '').split(',').some((p) => {
    const pattern = p.trim();
    if (pattern === wanted) return true;
    try {
      return new RegExp(`^(?:${pattern})$`).test(table);
    } catch {
      return false;
    }
  });
}
