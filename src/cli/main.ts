#!/usr/bin/env node
/**
 * The `timebucket` command.
 *   timebucket migrate [--down]   apply (or roll back) the database migrations
 *   timebucket cdc-tail           print CDC events from the coupons and orders topics
 */
import { Command } from 'commander';
import { loadConfig } from '../config';
import { createLogger } from '../ops/logger';
import { migrate } from './migrate';
import { cdcTail } from './cdc-tail';

async function main(argv: string[]): Promise<void> {
  const program = new Command('timebucket')
    .description('time-driven state transitions over Kafka time-bucket rings')
    .showHelpAfterError();

  program
    .command('migrate')
    .description('apply the database migrations (idempotent)')
    .option('--down', 'roll back every migration instead')
    .action(async (opts: { down?: boolean }) => {
      const config = loadConfig(process.env);
      await migrate(config, createLogger(config.logLevel), { down: opts.down === true });
    });

  program
    .command('cdc-tail')
    .description('print CDC events for coupons and orders as they arrive (Ctrl-C stops)')
    .option('--demo', 'insert, update and delete a few demo coupons so events flow')
    .option('--seconds <n>', 'stop after n seconds', (v) => Number.parseInt(v, 10))
    .action(async (opts: { demo?: boolean; seconds?: number }) => {
      const config = loadConfig(process.env);
      await cdcTail(config, createLogger(config.logLevel), { demo: opts.demo === true, seconds: opts.seconds });
    });

  await program.parseAsync(argv);
}

main(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  process.exit(1);
});
