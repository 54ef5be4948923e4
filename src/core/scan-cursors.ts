/**
 * The compensation scanner's cursors, one per transition, from-value and table: which rows each
 * pages through and its key in scanner_cursors. Pure: the scanner (reconcile/sql/claim-scan-page.ts)
 * pages with them, and the first-pass check (db/check-entity-data.ts) reads their completed passes.
 */
import { isSpread, type Entity, type EntityCatalogue, type Location, type StatusValue, type Transition } from './entity-catalogue';

/** The width of scanner_cursors.entity (migration 20261210000000). */
export const CURSOR_KEY_MAX = 160;

export type ScanCursor = Readonly<{
  /** Its row in scanner_cursors (column `entity`). */
  key: string;
  entity: Entity;
  transition: Transition;
  /** The one table this cursor pages through. */
  location: Location;
  /** The one from-value this cursor pages through. */
  from: StatusValue;
}>;

/** Every cursor of the catalogue: per transition, per from-value, in file order. */
export function scanCursorsOf(catalogue: EntityCatalogue): ScanCursor[] {
  return catalogue.entities.flatMap((entity) =>
    entity.transitions.flatMap((transition, j) => {
      const base = j === 0 ? entity.name : transition.ref;
      return transition.from.flatMap((from, i) =>
        entity.locations.map((location) => {
          const own = i === 0 ? base : `${base}#${i}`;
          const key = isSpread(entity) ? `${own}@${location.key}` : own;
          if (key.length > CURSOR_KEY_MAX) throw new RangeError(`scanner cursor key ${key} is longer than ${CURSOR_KEY_MAX}`);
          return { key, entity, transition, from, location };
        }),
      );
    }),
  );
}
