/**
 * The operator's switches, for the deployment named by TB_GROUP_PREFIX:
 *
 *   timebucket ctl pause    --what coupon|order|scanner [--reason <text>]
 *   timebucket ctl resume   --what coupon|order|scanner [--reason <text>]
 *   timebucket ctl throttle --what coupon|order --per-second <n> [--reason <text>]   (0 lifts it)
 *   timebucket ctl unthrottle --what coupon|order [--reason <text>]
 *   timebucket ctl status [--json]
 *
 * A change is a row in control_switches; every running process reads it within its poll
 * interval (TB_CONTROL_POLL_MS) and logs what it saw. Paused: the expirer holds the entity's due
 * entries (nothing committed past them) and the scanner leaves it alone; resumed: everything
 * due fires. A throttle limits each process's transitions of the entity per second.
 */
import { hostname, userInfo } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { formatUtc } from '../core/utc-time';
import { z } from 'zod';
import { Config, loadConfig } from '../config';
import { createDb, Db } from '../db/knex';
import { createCommandLogger } from '../ops/logger';
import { readSwitches, setPaused, setThrottle, SwitchChange } from '../ops/control-switch-store';
import { Switch, SwitchName, SwitchNames, Switches, ThrottleNames } from '../ops/control-switch-state';

type ChangeOptions = { what: SwitchName; reason?: string; by?: string };

export function registerCtlCommands(program: Command): void {
  const ctl = program.command('ctl').description('pause, resume and throttle transitions on every running instance (within TB_CONTROL_POLL_MS)');

  withChangeOptions(ctl.command('pause').description('hold every due entry of an entity (or the scanner) until resumed'), SwitchNames).action(
    (opts: ChangeOptions) => change(opts, (db, c) => setPaused(db, c, true)),
  );
  withChangeOptions(ctl.command('resume').description('let a paused entity (or the scanner) go again: everything due fires'), SwitchNames).action(
    (opts: ChangeOptions) => change(opts, (db, c) => setPaused(db, c, false)),
  );
  withChangeOptions(ctl.command('throttle').description('limit an entity to N transitions per second per process (0 lifts the limit)'), ThrottleNames)
    .requiredOption('--per-second <n>', 'transitions per second and per process; 0 lifts the throttle', perSecond)
    .action((opts: ChangeOptions & { perSecond: number }) => change(opts, (db, c) => setThrottle(db, c, opts.perSecond === 0 ? null : opts.perSecond)));
  withChangeOptions(ctl.command('unthrottle').description('lift the throttle of an entity'), ThrottleNames).action((opts: ChangeOptions) =>
    change(opts, (db, c) => setThrottle(db, c, null)),
  );

  ctl
    .command('status')
    .description('print every switch with who changed it, when (UTC) and why')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const config = loadConfig(process.env);
      const switches = await withDb(config, (db) => readSwitches(db, config.groupPrefix));
      console.log(opts.json === true ? JSON.stringify({ scope: config.groupPrefix, switches: SwitchNames.map((w) => asJson(switches[w])) }) : statusText(config.groupPrefix, switches));
    });
}

function withChangeOptions(cmd: Command, names: readonly SwitchName[]): Command {
  return cmd
    .addOption(new Option('--what <what>', 'which switch').choices(names).makeOptionMandatory())
    .option('--reason <text>', 'why (shown by `ctl status` and logged by every instance)', reasonText)
    .option('--by <name>', 'who (default: TB_INSTANCE_ID if set, else user@host)', byName);
}

async function change(opts: ChangeOptions, write: (db: Db, change: SwitchChange) => Promise<void>): Promise<void> {
  const config = loadConfig(process.env);
  const scope = config.groupPrefix;
  const now = await withDb(config, async (db) => {
    await write(db, { scope, what: opts.what, by: opts.by ?? operator(config), ...(opts.reason !== undefined && { reason: opts.reason }) });
    return (await readSwitches(db, scope))[opts.what];
  });
  console.log(`${switchLine(now)}\nscope ${scope}: running instances apply it within their poll interval (TB_CONTROL_POLL_MS, default 1 s)`);
}

/**
 * Who made a change: TB_INSTANCE_ID when the operator set one, else user@host (config's default
 * instance id carries a random suffix, which would name a different operator on every call).
 */
function operator(config: Config): string {
  if (process.env['TB_INSTANCE_ID'] !== undefined) return config.instanceId;
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the host name alone.
  }
  return `${user}@${hostname()}`.slice(0, 64);
}

async function withDb<T>(config: Config, use: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(config.db, { logger: createCommandLogger(config.logLevel) });
  try {
    return await use(db);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ER_NO_SUCH_TABLE') throw new Error('table control_switches is missing: run `timebucket migrate` first');
    throw err;
  } finally {
    await db.destroy();
  }
}

function statusText(scope: string, switches: Switches): string {
  return [`control switches of scope ${scope} (TB_GROUP_PREFIX); times in UTC`, ...SwitchNames.map((w) => switchLine(switches[w]))].join('\n');
}

function switchLine(s: Switch): string {
  const state = s.paused ? 'PAUSED' : 'running';
  const throttle = s.perSecond === null ? 'no throttle' : `throttled to ${s.perSecond}/s per process`;
  const last = s.updatedAt === null ? 'never changed' : `changed ${utc(s.updatedAt)} by ${s.updatedBy ?? '?'}${s.reason === null ? '' : ` (reason: ${s.reason})`}`;
  return `${s.what.padEnd(8)} ${state.padEnd(8)} ${throttle.padEnd(32)} ${last}`;
}

function asJson(s: Switch): Record<string, unknown> {
  return { what: s.what, paused: s.paused, perSecond: s.perSecond, reason: s.reason, updatedBy: s.updatedBy, updatedAt: s.updatedAt === null ? null : utc(s.updatedAt) };
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
