/**
 * timebucket backfill [--entity <name> | --transition <entity.transition>] [--since <ISO>] [--until <ISO>] [--page-size N] [--json]
 *
 * The names are the entities file's (TB_ENTITIES), checked once it is loaded: commander cannot
 * list them as choices, because the file is known only after the configuration is read.
 */
import { Command, Option } from 'commander';
import { entityNames, type EntityCatalogue, type Transition } from '../core/entity-catalogue';
import type { SetupCommand } from './command-setup';
import { runBackfill } from './backfill';
import { interruptible } from './interrupt';
import { isoTimeArg, positiveIntArg } from './options';

type BackfillFlags = { entity?: string; transition?: string; since?: number; until?: number; pageSize: number; json?: boolean };

export function registerBackfillCommand(program: SetupCommand): void {
  program
    .command('backfill')
    .description("schedule the rows already in the database in a transition's from-states (idempotent; run after the repartitioner is ready)")
    .addOption(new Option('--entity <name>', "only this entity's transitions (an entity of the entities file)"))
    .addOption(new Option('--transition <entity.transition>', 'only this transition (e.g. coupon.expired)').conflicts('entity'))
    .option('--since <iso>', 'only rows due at or after this time (ISO-8601, any zone; none: UTC)', isoTimeArg)
    .option('--until <iso>', 'only rows due before this time (ISO-8601, any zone; none: UTC)', isoTimeArg)
    .option('--page-size <n>', 'rows per database page and per append', positiveIntArg, 1_000)
    .option('--json', 'print the summary as one JSON line')
    // Reads the rows, routes them into the rings.
    .actionWith(
      { uses: ['db', 'kafka', 'topology', 'entities'], logTo: 'stderr' },
      async ({ config, topology, catalogue, logger }, opts: BackfillFlags, cmd: Command) => {
        const transitions = selectTransitions(catalogue, opts, (message) => cmd.error(message));
        const window = { ...(opts.since !== undefined && { since: new Date(opts.since) }), ...(opts.until !== undefined && { until: new Date(opts.until) }) };
        // Interrupted: the summary says how to finish; interruptible exits 130 (SIGINT) or 143 (SIGTERM).
        await interruptible((signal) =>
          runBackfill(config, topology, catalogue, logger, { transitions, window, pageSize: opts.pageSize, json: opts.json === true }, signal),
        );
      },
    );
}

/** The transitions a run covers: all, an entity's, or one; an unknown name is a usage error (exit 64). */
export function selectTransitions(
  catalogue: EntityCatalogue,
  opts: Pick<BackfillFlags, 'entity' | 'transition'>,
  usage: (message: string) => never,
): readonly Transition[] {
  if (opts.transition !== undefined) {
    const t = catalogue.transitions.find((x) => x.ref === opts.transition);
    if (t === undefined)
      usage(
        `error: option '--transition <entity.transition>' argument '${opts.transition}' is invalid. Allowed choices are ${catalogue.transitions.map((x) => x.ref).join(', ')}.`,
      );
    return [t];
  }
  if (opts.entity === undefined) return catalogue.transitions;
  const names = entityNames(catalogue);
  if (!names.includes(opts.entity)) usage(`error: option '--entity <name>' argument '${opts.entity}' is invalid. Allowed choices are ${names.join(', ')}.`);
  return catalogue.transitions.filter((t) => t.entity === opts.entity);
}
