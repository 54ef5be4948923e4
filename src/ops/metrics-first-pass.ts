/**
 * The first-pass hold (db/first-pass-holds.ts): which transitions this process holds, and the
 * entries it marked done without running them. Built unregistered (`registers` is empty);
 * createMetrics registers them in the scrape order. Labels: entity and transition, the catalogue's.
 */
import { Gauge, type Registry } from 'prom-client';
import { entityCounter } from './metric-kinds';
import type { SeriesAtZero } from './metric-sources';

export function firstPassMetrics(registers: Registry[], zeroed: SeriesAtZero) {
  const family = {
    firstPassHeld: new Gauge({
      name: 'timebucket_first_pass_held',
      help: 'Tables at which this process holds the transition because its first pass would move too large a share at once (TB_ALLOW_LARGE_FIRST_PASS lifts it); 0 when none',
      labelNames: ['entity', 'transition'] as const,
      registers,
    }),
    firstPassHeldEntries: entityCounter(
      registers,
      'timebucket_first_pass_held_entries_total',
      'Stream entries of a held transition marked done without running it (the scanner moves their rows once the hold is lifted)',
    ),
  };
  for (const { entity, name: transition } of zeroed.transitions) family.firstPassHeld.set({ entity, transition }, 0);
  for (const entity of zeroed.entities) family.firstPassHeldEntries.inc({ entity }, 0);
  return family;
}
