/**
 * What the operator's switches are (`timebucket ctl`), as every process sees them: one per
 * entity of the entities file (pause and throttle its transitions, all of them) and one for the
 * compensation scanner (pause its passes). Plain values and pure helpers, shared by the poller,
 * the CLI and the ops endpoint. The names come from the catalogue (switchNamesOf), so a team's
 * entities get their switches without a code change.
 */
import { ConfigError } from '../core/errors';

/** The compensation scanner's switch (pause only: its throttle is its entity's). */
export const SCANNER_SWITCH = 'scanner';

/** An entity name, or SCANNER_SWITCH. */
export type SwitchName = string;

/** The switches of a deployment: one per entity (in file order), then the scanner's. */
export function switchNamesOf(entities: readonly string[]): SwitchName[] {
  // One switch name would pause two things: refused, as a bad entities file is.
  if (entities.includes(SCANNER_SWITCH))
    throw new ConfigError(`an entity cannot be named '${SCANNER_SWITCH}': that is the compensation scanner's switch`, { problems: ['TB_ENTITIES'] });
  return [...entities, SCANNER_SWITCH];
}

/** The switches a throttle applies to: the entities' (the scanner's transitions follow their entity's). */
export function throttleNamesOf(entities: readonly string[]): SwitchName[] {
  return [...entities];
}

export type Switch = Readonly<{
  what: SwitchName;
  paused: boolean;
  /** Transitions a second per process; null: not throttled. */
  perSecond: number | null;
  /** The last change: why, who, when (database clock); null while never set. */
  reason: string | null;
  updatedBy: string | null;
  updatedAt: Date | null;
}>;

/** Every switch of the deployment, in switch-name order. */
export type Switches = ReadonlyMap<SwitchName, Switch>;

/**
 * `known` is false until the switches were read once: a process that has never read them
 * treats everything as paused (see ControlSwitches).
 */
export type SwitchState = Readonly<{ known: boolean; switches: Switches }>;

export function defaultSwitch(what: SwitchName): Switch {
  return { what, paused: false, perSecond: null, reason: null, updatedBy: null, updatedAt: null };
}

export function defaultSwitches(names: readonly SwitchName[]): Switches {
  return new Map(names.map((what) => [what, defaultSwitch(what)]));
}

export function sameSwitch(a: Switch, b: Switch): boolean {
  return (
    a.paused === b.paused &&
    a.perSecond === b.perSecond &&
    a.reason === b.reason &&
    a.updatedBy === b.updatedBy &&
    (a.updatedAt?.getTime() ?? null) === (b.updatedAt?.getTime() ?? null)
  );
}

/**
 * What /readyz and the logs say about the switches: what is paused, what is throttled. Before
 * the first read everything counts as paused, as the process behaves.
 */
export type SwitchSummary = Readonly<{ known: boolean; paused: SwitchName[]; throttled: Partial<Record<SwitchName, number>> }>;

export function summarize(state: SwitchState): SwitchSummary {
  const all = [...state.switches.values()];
  return {
    known: state.known,
    paused: all.filter((s) => s.paused || !state.known).map((s) => s.what),
    throttled: Object.fromEntries(all.flatMap((s) => (s.perSecond === null ? [] : [[s.what, s.perSecond] as const]))),
  };
}
