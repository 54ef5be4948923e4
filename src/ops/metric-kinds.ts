/**
 * The shapes most metric families repeat, so that a family reads as its names and help texts.
 * Each takes the registers to add the metric to (the families pass none: createMetrics registers
 * them in the scrape order).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A counter without labels. */
export function counter(registers: Registry[], name: string, help: string): Counter {
  return new Counter({ name, help, registers });
}

/** A counter by entity (the catalogue's, a handful). */
export function entityCounter(registers: Registry[], name: string, help: string): Counter<'entity'> {
  return new Counter({ name, help, labelNames: ['entity'] as const, registers });
}

/** A histogram by entity. */
export function entityHistogram(registers: Registry[], name: string, help: string, buckets: number[]): Histogram<'entity'> {
  return new Histogram({ name, help, labelNames: ['entity'] as const, buckets, registers });
}

/** A gauge without labels, set at scrape time from the source a stage registered (none: unset). */
export function sourceGauge(registers: Registry[], name: string, help: string, source: () => (() => number) | undefined): Gauge {
  return new Gauge({
    name,
    help,
    registers,
    collect() {
      const read = source();
      if (read) this.set(read());
    },
  });
}
