/**
 * timebucket forecast [--tier t] [--all] [--json]
 *
 * The work ahead, per tier and bucket, from offsets alone (core/forecast.ts): what each ring
 * topic holds that its group has not consumed, the due lane's backlog, and which buckets are
 * released. Read-only and cheap: a few admin requests per topic, no consumer group joined, no
 * record read.
 */
import type { Command } from 'commander';
import { systemClock } from '../core/clock';
import { createKafka } from '../kafka/client';
import { readForecast } from '../kafka/read-forecast';
import { forecastTopics } from '../core/forecast';
import type { SetupCommand } from './command-setup';
import { forecastJson, forecastLines } from './forecast-output';

type ForecastFlags = { tier?: string; all?: boolean; json?: boolean };

export function registerForecastCommand(program: SetupCommand): void {
  program
    .command('forecast')
    .description('the entries held per upcoming bucket of each tier, from offsets alone (an upper bound of the work ahead)')
    .option('--tier <name>', 'one tier only')
    .option('--all', 'print every bucket, also those holding nothing')
    .option('--json', 'print the forecast as one JSON object')
    // Offsets of the rings and of the hold groups: no database. The entities file validates the topology's shards.
    .actionWith({ uses: ['kafka', 'topology', 'entities'], logTo: 'stderr' }, async ({ config, topology, logger }, opts: ForecastFlags, command: Command) => {
      if (opts.tier !== undefined && !topology.tiers.some((t) => t.name === opts.tier)) {
        // A usage error: printed, and exit 64 like an unknown option.
        command.error(`error: no tier '${opts.tier}' in the topology (tiers: ${topology.tiers.map((t) => t.name).join(', ')})`, { exitCode: 64 });
      }
      // A client per 64 topics, at most 8: their first reads side by side (kafka/read-forecast.ts).
      const kafka = createKafka(config.kafka, logger, '-forecast');
      const admins = Array.from({ length: Math.min(8, Math.ceil(forecastTopics(topology).length / 64)) }, () => kafka.admin());
      await Promise.all(admins.map((a) => a.connect()));
      try {
        const forecast = await readForecast(admins, topology, config.groupPrefix, () => systemClock.now());
        const printed = { tier: opts.tier, all: opts.all === true };
        if (opts.json === true) console.log(JSON.stringify(forecastJson(forecast, printed)));
        else for (const line of forecastLines(forecast, printed)) console.log(line);
      } finally {
        await Promise.all(admins.map((a) => a.disconnect()));
      }
    });
}
