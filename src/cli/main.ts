#!/usr/bin/env node
/**
 * The `timebucket` command.
 *   timebucket run [--roles a,b]    run roles (default: all) until SIGINT/SIGTERM
 *   timebucket migrate [--down]     apply (or roll back) the database migrations
 *   timebucket topics apply         create missing declared topics, report drift [--grow-partitions]
 *   timebucket schemas register     register the event schemas, save their ids for `run`
 *   timebucket cdc-tail             print CDC events of the mapped tables
 *   timebucket connector config     print the Debezium connector for the mapped tables
 *   timebucket check                the database, the account and the connectors against the entities file
 *   timebucket sql effective-view   print per table the view of the status a reader should see
 *   timebucket forecast             the entries held per upcoming bucket, from offsets alone
 *   timebucket explain <entity> <id> why one row did or did not move
 *   timebucket --version            print the version
 * Exit codes (sysexits.h where one fits), so scripts and orchestrators can tell failures apart:
 * 0 done; 1 runtime failure; 3 topic drift (topics apply); 64 bad usage (EX_USAGE: unknown
 * command or option); 78 bad configuration (EX_CONFIG); 130/143 stopped by SIGINT/SIGTERM twice.
 */
import { CommanderError } from 'commander';
import { ConfigError } from '../core/errors';
import { failureHint } from './failure-hint';
import { timebucketProgram } from './program';

async function main(argv: string[]): Promise<void> {
  await timebucketProgram(process.env).parseAsync(argv);
}

const EX_USAGE = 64;
const EX_CONFIG = 78;

main(process.argv).catch((err: unknown) => {
  // Commander has printed its message (or the help, or the version) already.
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : EX_USAGE);
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  const hint = failureHint(err);
  if (hint !== undefined) console.error(`hint: ${hint}`);
  process.exit(err instanceof ConfigError ? EX_CONFIG : 1);
});
