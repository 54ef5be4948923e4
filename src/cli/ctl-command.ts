/**
 * The operator's switches, for the deployment named by TB_GROUP_PREFIX:
 *
 *   timebucket ctl pause    --what <entity>|scanner [--reason <text>]
 *   timebucket ctl resume   --what <entity>|scanner [--reason <text>]
 *   timebucket ctl throttle --what <entity> --per-second <n> [--reason <text>]   (0 lifts it)
 *   timebucket ctl unthrottle --what <entity> [--reason <text>]
 *   timebucket ctl status [--json]      (the switches, and each running expirer's pacers)
 *
 * The entities are those of the entities file (TB_ENTITIES), checked once it is loaded (so not
 * listed as commander choices). A row left by an entity since removed from the file is shown
 * by `status` as ignored; no process applies it.
 *
 * A change is a row in control_switches; every running process reads it within its poll
 * interval (TB_CONTROL_POLL_MS) and logs what it saw. Paused: the expirer holds the entity's due
 * entries (nothing committed past them) and the scanner leaves it alone; resumed: everything
 * due fires. A throttle limits each process's transitions of the entity per second.
 */
import { hostname, userInfo } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { entityNames, type EntityCatalogue } from '../core/entity-catalogue';
import { formatUtc } from '../core/utc-time';
import { z } from 'zod';
import type { Config } from '../config';
import { createDb, Db } from '../db/knex';
import type { Logger } from '../ops/logger';
import type { Setup, SetupCommand } from './command-setup';
import { readSwitches, setPaused, setThrottle, SwitchChange, SwitchRead } from '../control/sql/switch-store';
import { Switch, SwitchName, switchNamesOf, throttleNamesOf } from '../control/switch-state';
import { ConfigError } from '../core/errors';
import { pacerLines, readPacers } from './pacer-status';

type ChangeOptions = { what: SwitchName; reason?: string; by?: string };
/** Which names a command accepts: every switch, or the throttleable ones. */
type Names = 'switches' | 'throttles';

/** The switches live in the database; their names are the entities file's. */
const CTL = { uses: ['db', 'entities'], logTo: 'stderr' } as const;
type CtlSetup = Setup<(typeof CTL.uses)[number]>;

export function registerCtlCommands(program: SetupCommand): void {
  const ctl = program.command('ctl').description('pause, resume and throttle transitions on every running instance (within TB_CONTROL_POLL_MS)');

  withChangeOptions(ctl.command('pause').description('hold every due entry of an entity (or the scanner) until resumed'), 'an entity or scanner').actionWith(
    CTL,
    (setup, opts: ChangeOptions, cmd: Command) => change(setup, cmd, 'switches', opts, (db, c) => setPaused(db, c, true)),
  );
  withChangeOptions(
    ctl.command('resume').description('let a paused entity (or the scanner) go again: everything due fires'),
    'an entity or scanner',
  ).actionWith(CTL, (setup, opts: ChangeOptions, cmd: Command) => change(setup, cmd, 'switches', opts, (db, c) => setPaused(db, c, false)));
  withChangeOptions(ctl.command('throttle').description('limit an entity to N transitions per second per process (0 lifts the limit)'), 'an entity')
    .requiredOption('--per-second <n>', 'transitions per second and per process; 0 lifts the throttle', perSecond)
    .actionWith(CTL, (setup, opts: ChangeOptions & { perSecond: number }, cmd: Command) =>
      change(setup, cmd, 'throttles', opts, (db, c) => setThrottle(db, c, opts.perSecond === 0 ? null : opts.perSecond)),
    );
  withChangeOptions(ctl.command('unthrottle').description('lift the throttle of an entity'), 'an entity').actionWith(
    CTL,
    (setup, opts: ChangeOptions, cmd: Command) => change(setup, cmd, 'throttles', opts, (db, c) => setThrottle(db, c, null)),
  );

  ctl
    .command('status')
    .description("print every switch with who changed it, when (UTC) and why, and each running expirer's pacers")
    .option('--json', 'print one JSON object')
    .actionWith(CTL, async ({ config, catalogue, logger }, opts: { json?: boolean }) => {
      const names = namesOf(catalogue, 'switches');
      const [read, pacers] = await withDb(
        config,
        logger,
        async (db) => [await readSwitches(db, config.groupPrefix, names), await readPacers(db, config.groupPrefix)] as const,
      );
      const switches = [...read.switches.values()];
      console.log(
        opts.json === true
          ? JSON.stringify({ scope: config.groupPrefix, switches: switches.map(asJson), ignored: read.unknown, pacers })
          : [statusText(config.groupPrefix, switches, read.unknown), ...pacerLines(pacers)].join('\n'),
      );
    });
}

function withChangeOptions(cmd: SetupCommand, which: string): SetupCommand {
  return cmd
    .addOption(new Option('--what <name>', `which switch: ${which} (the entities file's names)`).makeOptionMandatory())
    .option('--reason <text>', 'why (shown by `ctl status` and logged by every instance)', reasonText)
    .option('--by <name>', 'who (default: TB_INSTANCE_ID if set, else user@host)', byName);
}

/** The switch names of the configured entities file: every switch, or those a throttle applies to. */
function namesOf(catalogue: EntityCatalogue, which: Names): SwitchName[] {
  const entities = entityNames(catalogue);
  return which === 'switches' ? switchNamesOf(entities) : throttleNamesOf(entities);
}

async function change(
  { config, catalogue, logger }: CtlSetup,
  cmd: Command,
  which: Names,
  opts: ChangeOptions,
  write: (db: Db, change: SwitchChange) => Promise<void>,
): Promise<void> {
  const names = namesOf(catalogue, which);
  // Checked before anything is written: a typo must not leave a row no process reads.
  if (!names.includes(opts.what)) cmd.error(`error: option '--what <name>' argument '${opts.what}' is invalid. Allowed choices are ${names.join(', ')}.`);
  const scope = config.groupPrefix;
  const now = await withDb(config, logger, async (db) => {
    await write(db, { scope, what: opts.what, by: opts.by ?? operator(config), ...(opts.reason !== undefined && { reason: opts.reason }) });
    return (await readSwitches(db, scope, [opts.what])).switches.get(opts.what)!;
  });
  console.log(`${switchLine(now)}\nscope ${scope}: running instances apply it within their poll interval (TB_CONTROL_POLL_MS, default 1 s)`);
}

/**
 * Who made a change: TB_INSTANCE_ID when the operator set one, else user@host (config's default
 * instance id carries a random suffix, which would name a different operator on every call).
 */
function operator(config: Config): string {
  if (config.instanceIdGiven) return config.instanceId;
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the host name alone.
  }
  return `${user}@${hostname()}`.slice(0, 64);
}

async function withDb<T>(config: Config, logger: Logger, use: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(config.db, { logger });
  try {
    return await use(db);
  } catch (err) {
    const { code, errno } = err as { code?: unknown; errno?: unknown };
    if (code === 'ER_NO_SUCH_TABLE')
      throw new ConfigError('table control_switches is missing: run `timebucket migrate` first', { problems: ['control_switches'] });
    // A name other than coupon/order/scanner (CHECK failed: MySQL 3819, MariaDB 4025, which mysql2
    // names after MySQL's 4025), or longer than 16 (1406): the table predates entities as data.
    if (errno === 3819 || errno === 4025 || errno === 1406) {
      throw new ConfigError('table control_switches only knows coupon, order and scanner: run `timebucket migrate` first', { problems: ['control_switches'] });
    }
    throw err;
  } finally {
    await db.destroy();
  }
}

function statusText(scope: string, switches: readonly Switch[], ignored: SwitchRead['unknown']): string {
  return [
    `control switches of scope ${scope} (TB_GROUP_PREFIX); times in UTC`,
    ...switches.map(switchLine),
    ...(ignored.length === 0 ? [] : [`ignored (no entity of that name in the entities file): ${ignored.join(', ')}`]),
  ].join('\n');
}

function switchLine(s: Switch): string {
  const state = s.paused ? 'PAUSED' : 'running';
  const throttle = s.perSecond === null ? 'no throttle' : `throttled to ${s.perSecond}/s per process`;
  const last =
    s.updatedAt === null ? 'never changed' : `changed ${utc(s.updatedAt)} by ${s.updatedBy ?? '?'}${s.reason === null ? '' : ` (reason: ${s.reason})`}`;
  return `${s.what.padEnd(8)} ${state.padEnd(8)} ${throttle.padEnd(32)} ${last}`;
}

function asJson(s: Switch): Record<string, unknown> {
  return {
    what: s.what,
    paused: s.paused,
    perSecond: s.perSecond,
    reason: s.reason,
    updatedBy: s.updatedBy,
    updatedAt: s.updatedAt === null ? null : utc(s.updatedAt),
  };
}

function utc(d: Date): string {
  return formatUtc(d.getTime());
}

const PerSecond = z.coerce.number().finite().min(0).max(1_000_000);
const Reason = z.string().trim().min(1).max(255);
const By = z.string().trim().min(1).max(64);

function perSecond(value: string): number {
  return parsed(PerSecond, value, 'expected a number of transitions per second, 0 or more (0 lifts the throttle)');
}

function reasonText(value: string): string {
  return parsed(Reason, value, 'expected 1 to 255 characters');
}

function byName(value: string): string {
  return parsed(By, value, 'expected 1 to 64 characters');
}

function parsed<T>(schema: z.ZodType<T>, value: string, expected: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new InvalidArgumentError(expected);
  return r.data;
}
