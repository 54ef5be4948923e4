/** Reads and validates the entities file named by the configuration (TB_ENTITIES). */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../core/errors';
import type { EntityCatalogue } from '../core/entity-catalogue';
import { parseEntityFile } from '../core/entity-file';

export function loadEntities(path: string): EntityCatalogue {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read entities file ${path}: ${err instanceof Error ? err.message : String(err)}`, { problems: ['TB_ENTITIES'] });
  }
  return parseEntityFile(text, path);
}
