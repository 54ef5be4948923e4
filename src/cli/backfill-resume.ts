/**
 * What an interrupted `timebucket backfill` prints so that it can be finished: the command for
 * the transition it stopped in (from the last due time it routed, or the window's start) and
 * one for each transition it never started, every one with the run's own window (`--until`
 * included), so that the runs together cover exactly what the interrupted one would have.
 * Re-routing a few rows twice is harmless (an entry is a reminder: the expirer re-reads the row).
 */
import { formatUtc } from '../core/utc-time';
import type { BackfillResult } from '../reconcile/backfill';
import type { TimeWindow } from '../reconcile/sql/read-expirable-page';

export type ResumeHint = Readonly<{
  entity: string;
  transition: string;
  since?: string;
  until?: string;
  /** Refs of the transitions not started. */
  then: readonly string[];
  /** The arguments of each `timebucket backfill` still to run, in order. */
  commands: readonly string[];
}>;

export function resumeHint(result: BackfillResult, window: TimeWindow): ResumeHint | undefined {
  const last = result.complete ? undefined : result.transitions[result.transitions.length - 1];
  if (last === undefined) return undefined;
  const windowSince = window.since === undefined ? undefined : formatUtc(window.since.getTime());
  const until = window.until === undefined ? undefined : formatUtc(window.until.getTime());
  const since = last.lastExpireAtMs === undefined ? windowSince : formatUtc(last.lastExpireAtMs);
  const args = (ref: string, from: string | undefined) =>
    [`--transition ${ref}`, ...(from === undefined ? [] : [`--since ${from}`]), ...(until === undefined ? [] : [`--until ${until}`])].join(' ');
  return {
    entity: last.entity,
    transition: last.transition,
    ...(since !== undefined && { since }),
    ...(until !== undefined && { until }),
    then: result.notStarted,
    commands: [args(`${last.entity}.${last.transition}`, since), ...result.notStarted.map((ref) => args(ref, windowSince))],
  };
}
