/**
 * What the operator's switches are (`timebucket ctl`), as every process sees them: one per
 * entity (coupon, order: pause and throttle its transitions) and one for the compensation
 * scanner (pause its passes). Plain values and pure helpers, shared by the poller, the CLI and
 * the ops endpoint.
 */
import type { EntityType } from '../core/bucket-entry';

export const SwitchNames = ['coupon', 'order', 'scanner'] as const;
export type SwitchName = (typeof SwitchNames)[number];

/** The switches a throttle applies to: an entity's transitions (the scanner's follow its entity's). */
export const ThrottleNames = ['coupon', 'order'] as const satisfies readonly EntityType[];

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

export type Switches = Readonly<Record<SwitchName, Switch>>;

/**
 * `known` is false until the switches were read once: a process that has never read them
 * treats everything as paused (see ControlSwitches).
 */
export type SwitchState = Readonly<{ known: boolean; switches: Switches }>;

export function defaultSwitch(what: SwitchName): Switch {
  return { what, paused: false, perSecond: null, reason: null, updatedBy: null, updatedAt: null };
}

export function defaultSwitches(): Switches {
  return { coupon: defaultSwitch('coupon'), order: defaultSwitch('order'), scanner: defaultSwitch('scanner') };
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
  const all = SwitchNames.map((what) => state.switches[what]);
  return {
    known: state.known,
    paused: all.filter((s) => s.paused || !state.known).map((s) => s.what),
    throttled: Object.fromEntries(all.filter((s) => s.perSecond !== null).map((s) => [s.what, s.perSecond])),
  };
}
