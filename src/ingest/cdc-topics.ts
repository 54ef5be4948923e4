/**
 * Which CDC topic carries which entity's changes, and where a change happened.
 *
 * Each database has its own Debezium connector, with its own topic.prefix (config.databases).
 * Debezium names a table's topic `<topic.prefix>.<schema>.<table>`. An entity with one table on a
 * database keeps that topic. An entity with several tables on one database (a table set) has them
 * routed into one topic, `<topic.prefix>.<schema>.<entity>`, by Debezium's ByLogicalTableRouter
 * (ingest/connector-config.ts), which keeps keys unique by adding the physical table to them; the
 * envelope's source.table still names the physical table, and is what tells the location.
 */
import type { Config, NamedDatabase } from '../config';
import { isSpread, unconfiguredDatabases, type Entity, type EntityCatalogue, type Location } from '../core/entity-catalogue';
import type { CdcChange } from '../core/cdc-envelope';
import { CdcInvalidError, ConfigError } from '../core/errors';

/** One CDC topic: the entity it carries and its tables there (by physical table name). */
export type CdcTopic = Readonly<{ topic: string; entity: Entity; database: string; tables: ReadonlyMap<string, Location>; routed: boolean }>;

type CdcSettings = Pick<Config, 'databases'>;

/** The topic of one table, as Debezium names it (`cdc`: config.cdc for the main database). */
export function cdcTopicOf(cdc: Pick<Config['cdc'], 'topicPrefix' | 'database'>, table: string): string {
  return `${cdc.topicPrefix}.${cdc.database}.${table}`;
}

function topicOn(database: NamedDatabase, table: string): string {
  return cdcTopicOf({ topicPrefix: database.cdcTopicPrefix, database: database.database }, table);
}

/** Every CDC topic of the catalogue. Throws ConfigError when a database is not configured or two topics collide. */
export function cdcTopicList(config: CdcSettings, catalogue: EntityCatalogue): CdcTopic[] {
  const topics: CdcTopic[] = [];
  const missing = unconfiguredDatabases(catalogue, config.databases);
  for (const entity of catalogue.entities) {
    for (const name of entity.databases) {
      const database = config.databases[name];
      if (database === undefined) continue; // in `missing`
      const here = entity.locations.filter((l) => l.database === name);
      const routed = here.length > 1;
      topics.push({
        topic: topicOn(database, routed ? entity.name : here[0]!.table),
        entity,
        database: name,
        tables: new Map(here.map((l) => [l.table, l])),
        routed,
      });
    }
  }
  const seen = new Map<string, string>();
  for (const t of topics) {
    const other = seen.get(t.topic);
    if (other !== undefined) missing.push(`${t.entity.name} and ${other} would share the CDC topic ${t.topic}`);
    seen.set(t.topic, t.entity.name);
  }
  if (missing.length > 0) throw new ConfigError(`the entities file does not fit the configured databases: ${missing.join('; ')}`, { problems: missing });
  return topics;
}

/** topic → its CdcTopic, for every entity of the catalogue. */
export function cdcTopics(config: CdcSettings, catalogue: EntityCatalogue): Readonly<Record<string, CdcTopic>> {
  return Object.fromEntries(cdcTopicList(config, catalogue).map((t) => [t.topic, t]));
}

/**
 * Where a change on `topic` happened: the location of a spread entity's row (its source.table
 * must be one of the topic's tables, else the record is data this stage cannot place: DLQ), or
 * undefined for an entity with one table.
 */
export function locationOfChange(topic: CdcTopic, change: CdcChange): Location | undefined {
  if (!isSpread(topic.entity)) return undefined;
  if (!topic.routed) return topic.tables.values().next().value;
  const table = change.source.table;
  const location = table === undefined ? undefined : topic.tables.get(table);
  if (location === undefined)
    throw new CdcInvalidError(`source.table ${JSON.stringify(table)} is not a table of ${topic.entity.name} on database ${topic.database}`, {
      topic: topic.topic,
    });
  return location;
}
