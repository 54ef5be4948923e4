/**
 * What the stream's pacers did during a run, read once a second from its expirers' /metrics
 * (timebucket_pacing_*): the seconds each pacer spent in each state and held back by each signal,
 * and the lowest rate it set. A bench's answer to "did pacing engage, on what, for how long".
 */
import { scrapeMetrics } from '../../lib/metrics-text';

export type PacingReport = Readonly<{
  samples: number;
  /** Seconds (samples) per state, over the run's expirers and databases. */
  states: Readonly<Record<string, number>>;
  /** Seconds (samples) held back per signal. */
  limitedBy: Readonly<Record<string, number>>;
  /** The lowest finite rate seen (rows/s), null if never paced. */
  minRate: number | null;
  /** Each sample of the first expirer's main database: [ISO time, rate (null: unpaced), state, signal or ''] */
  timeline: ReadonlyArray<readonly [string, number | null, string, string]>;
}>;

const LABEL = /\{[^}]*(state|signal)="([^"]+)"[^}]*\}$/;

export function watchPacing(ports: readonly number[], intervalMs = 1_000): { stop: () => PacingReport } {
  const states: Record<string, number> = {};
  const limitedBy: Record<string, number> = {};
  let samples = 0;
  let minRate: number | null = null;
  const timeline: Array<readonly [string, number | null, string, string]> = [];
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void Promise.all(ports.map((p) => scrapeMetrics(p).catch(() => undefined)))
      .then((scrapes) => {
        const first = scrapes[0];
        if (first !== undefined) {
          const on = (name: string, label: string) =>
            [...first].find(([k, v]) => k.startsWith(name) && k.includes('database="main"') && v === 1)?.[0].match(new RegExp(`${label}="([^"]+)"`))?.[1] ?? '';
          const rate = first.get('timebucket_pacing_rate_rows_per_second{database="main"}');
          timeline.push([
            new Date().toISOString(),
            rate === undefined || !Number.isFinite(rate) ? null : Math.round(rate),
            on('timebucket_pacing_state', 'state'),
            on('timebucket_pacing_limited_by', 'signal'),
          ]);
        }
        for (const scrape of scrapes) {
          if (scrape === undefined) continue;
          let seen = false;
          for (const [key, value] of scrape) {
            if (key.startsWith('timebucket_pacing_rate_rows_per_second') && Number.isFinite(value)) minRate = Math.min(minRate ?? value, value);
            if (value !== 1) continue;
            const m = LABEL.exec(key);
            if (m === null) continue;
            if (key.startsWith('timebucket_pacing_state')) {
              states[m[2]!] = (states[m[2]!] ?? 0) + 1;
              seen = true;
            } else if (key.startsWith('timebucket_pacing_limited_by')) limitedBy[m[2]!] = (limitedBy[m[2]!] ?? 0) + 1;
          }
          if (seen) samples += 1;
        }
      })
      .finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      return { samples, states: { ...states }, limitedBy: { ...limitedBy }, minRate, timeline: [...timeline] };
    },
  };
}
