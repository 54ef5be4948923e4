/**
 * Durations as people write them in the entities file: `30m`, `1d`, `90s`, `2h`, or ISO 8601
 * (`P3D`, `PT30M`). Days are 24 hours: a fire point "3 days before" is 72 hours before the due
 * instant, whatever the calendar does in between (due times are UTC instants).
 */
import { Duration } from 'luxon';

const SHORT = /^([0-9]{1,9})(ms|s|m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The duration in ms, or a message saying why `text` is not one. */
export function parseDurationMs(text: string): number | string {
  const short = SHORT.exec(text);
  if (short !== null) return Number(short[1]) * UNIT_MS[short[2]!]!;
  // luxon reads calendar units (months, years) by its own rules; only fixed units are meant here.
  if (/[YW]|P[0-9.]*M/.test(text)) return `${JSON.stringify(text)}: months, weeks and years are not fixed lengths; write days (P21D, 21d)`;
  const iso = Duration.fromISO(text);
  if (!iso.isValid) return `${JSON.stringify(text)} is not a duration: write 30m, 1d, 90s, 2h or ISO 8601 (PT30M)`;
  return iso.as('milliseconds');
}
