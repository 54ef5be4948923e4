/**
 * What each command connects to, so that in production (TB_ENV=production) it requires only
 * those settings: the topics-apply Job has no database Secret, and needs none.
 */
import { ConfigPart, ConfigParts } from '../config';

const NEEDS: Readonly<Record<string, readonly ConfigPart[]>> = {
  // The grants follow the entities file.
  migrate: ['db', 'entities'],
  // The CDC topics are the mapped tables'.
  'topics apply': ['kafka', 'topology', 'entities'],
  'cdc-tail': ['kafka', 'entities'],
  // The ids are saved on the main database; derived schemas read their tables' columns.
  'schemas register': ['db', 'registry', 'topology', 'entities'],
  // The database for its flavour (unless --flavour), Kafka for the schema-history topic's brokers.
  'connector config': ['db', 'kafka', 'entities'],
  check: ['db', 'entities'],
  'sql effective-view': ['db', 'entities'],
  // The switches live in the database; their names are the entities file's.
  ctl: ['db', 'entities'],
  // Reads the rows, routes them into the rings.
  backfill: ['db', 'kafka', 'topology', 'entities'],
  // Offsets of the rings and of the hold groups: no database. The entities file validates the topology's shards.
  forecast: ['kafka', 'topology', 'entities'],
  // Reads the row and its event_outbox rows; the registry decodes their path; the topology places its entry.
  explain: ['db', 'registry', 'kafka', 'topology', 'entities'],
  // Reads the bucket from its ring topic and moves the live group; no database.
  'offsets reset': ['kafka', 'topology', 'entities'],
  // replay runs the expiry transactions and writes their events (encoded, with the saved schema
  // ids: the registry's URL names them), so it needs every part, as `run` does.
};

/** The parts a command line needs (`['topics', 'apply']` → kafka, topology); every part when unknown. */
export function needsOf(args: readonly string[]): readonly ConfigPart[] {
  const command =
    args[0] === 'topics' || args[0] === 'schemas' || args[0] === 'connector' || args[0] === 'sql' || args[0] === 'offsets'
      ? `${args[0]} ${args[1] ?? ''}`
      : (args[0] ?? '');
  return NEEDS[command] ?? ConfigParts;
}
