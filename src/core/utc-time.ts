/**
 * Times as operators type and read them: any ISO-8601 zone in, UTC out. timebucket's rows,
 * records and logs are all UTC, so every time a command prints is too.
 */
import { DateTime } from 'luxon';

/**
 * An ISO-8601 instant in any zone (`2026-12-01T10:15:00+01:00`, `…Z`) as epoch ms; a time
 * without an offset is taken as UTC.
 */
export function parseInstant(text: string): number {
  const parsed = DateTime.fromISO(text.trim(), { zone: 'utc' });
  if (!parsed.isValid)
    throw new RangeError(`not an ISO-8601 time: ${JSON.stringify(text)} (${parsed.invalidExplanation ?? parsed.invalidReason ?? 'invalid'})`);
  return parsed.toMillis();
}

/** Epoch ms as ISO-8601 in UTC, as every time is printed. */
export function formatUtc(ms: number): string {
  return DateTime.fromMillis(ms, { zone: 'utc' }).toISO() ?? new Date(ms).toISOString();
}
