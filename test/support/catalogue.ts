/** The shipped entities file (entities/default.json: the demo coupons and orders), loaded once for tests. */
import { join } from 'node:path';
import type { EntityCatalogue } from '../../src/core/entity-catalogue';
import { loadEntities } from '../../src/ops/load-entities';

export const defaultEntitiesPath = join(__dirname, '../../entities/default.json');
export const defaultCatalogue: EntityCatalogue = loadEntities(defaultEntitiesPath);
