/**
 * The forecast as metrics: every TB_FORECAST_INTERVAL_MS the cascader role reads the rings'
 * offsets (kafka/read-forecast.ts) and sets timebucket_forecast_entries{tier, position}, what
 * the dashboard's "work due ahead" heatmap draws and KEDA scales the expirer on before a known
 * spike. The figures are a whole forecast or none: set in one synchronous step, so a scrape
 * never sees half of one, and cleared when a read fails, so no stale figure stays.
 */
import type { Admin } from 'kafkajs';
import type { Clock } from '../core/clock';
import type { Forecast } from '../core/forecast';
import { Backoffs } from '../runtime/retry-policy';
import type { Topology } from '../core/topology';
import { readForecast } from '../kafka/read-forecast';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import { PollLoop } from '../runtime/poll-loop';

export function recordForecast(gauge: Metrics['forecastEntries'], forecast: Forecast): void {
  gauge.reset();
  gauge.set({ tier: 'due', position: '0' }, forecast.due);
  for (const t of forecast.tiers) for (const b of t.buckets) gauge.set({ tier: t.tier, position: String(b.position) }, b.entries);
}

export type ForecastLoopOptions = Readonly<{
  admin: Pick<Admin, 'connect' | 'fetchTopicOffsets' | 'fetchOffsets'>;
  topology: Topology;
  groupPrefix: string;
  clock: Clock;
  intervalMs: number;
  gauge: Metrics['forecastEntries'];
  logger: Logger;
}>;

/** Not started; the caller disconnects the admin client after stop(). */
export function forecastLoop(opts: ForecastLoopOptions): PollLoop {
  let connected = false;
  return new PollLoop({
    name: 'forecast',
    intervalMs: opts.intervalMs,
    backoff: Backoffs.forecast,
    tick: async () => {
      if (!connected) {
        await opts.admin.connect();
        connected = true;
      }
      recordForecast(opts.gauge, await readForecast(opts.admin, opts.topology, opts.groupPrefix, () => opts.clock.now()));
    },
    onFailure: () => opts.gauge.reset(),
    // Figures only: a read that keeps failing never fails the cascader; it is retried, logged.
    deterministicAttempts: Number.POSITIVE_INFINITY,
    logger: opts.logger,
  });
}
