/**
 * Which CDC topic carries which entity's changes. Debezium names a table's topic
 * `<topic.prefix>.<database>.<table>`; the entities file names the tables, so the topics follow.
 */
import type { Config } from '../config';
import type { Entity, EntityCatalogue } from '../core/entity-catalogue';

export function cdcTopicOf(cdc: Pick<Config['cdc'], 'topicPrefix' | 'database'>, table: string): string {
  return `${cdc.topicPrefix}.${cdc.database}.${table}`;
}

/** topic → the entity whose table it captures, for every entity of the catalogue. */
export function cdcTopics(cdc: Pick<Config['cdc'], 'topicPrefix' | 'database'>, catalogue: EntityCatalogue): Readonly<Record<string, Entity>> {
  return Object.fromEntries(catalogue.entities.map((e) => [cdcTopicOf(cdc, e.table), e]));
}
