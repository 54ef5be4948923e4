/**
 * A process's resident memory over time, one /proc reading per call to `sample()`: whether it
 * stays flat is the question, so the summary keeps the first and last readings beside the spread.
 */
import { percentile } from './percentiles';
import { memoryMb } from './proc';

export type RssSummary = Readonly<{ min: number; median: number; max: number; first: number; last: number; samples: number }>;

export type RssSeries = Readonly<{ sample: () => void; summary: () => RssSummary | null }>;

export function rssSeries(pid: number): RssSeries {
  const values: number[] = [];
  return {
    sample() {
      const m = memoryMb(pid);
      if (m !== null) values.push(m.rssMb);
    },
    summary() {
      if (values.length === 0) return null;
      const sorted = [...values].sort((a, b) => a - b);
      return {
        min: sorted[0]!,
        median: percentile(sorted, 50),
        max: sorted[sorted.length - 1]!,
        first: values[0]!,
        last: values[values.length - 1]!,
        samples: values.length,
      };
    },
  };
}
