/**
 * What a batch of reminders does at its fire time, decided by the database clock (docs/reminders.md):
 *
 *   fire time ahead by the database clock   → not yet due, again after the remaining time (as I2)
 *   row gone, or not in a from-state        → skipped: not_expirable
 *   row due at another time                 → skipped: moved (its new due time has entries of its own)
 *   row's due time passed                   → skipped: due_passed (a reminder is never sent after it)
 *   the row's next fire point passed        → skipped: superseded (that reminder says more, and
 *                                             this one, read late, would reach subscribers after it)
 *   otherwise                               → sent
 *
 * A digest instead reads the users' rows of its window (expire/sql/read-digest-rows.ts), so its
 * entries only say which (user, fire point, window) to read: planDigests groups them.
 *
 * Pure: the caller reads the rows and the clock.
 */
import type { ReminderOf, ReminderSkip } from './bucket-entry';
import type { ScheduledEntry } from './expiry-plan';
import type { ReadRow } from './expiry-plan';

export type ReminderEntry = ScheduledEntry & Readonly<{ remind: ReminderOf }>;

export type ReminderPlan = Readonly<{
  send: ReadonlyArray<Readonly<{ entry: ReminderEntry; row: ReadRow }>>;
  skipped: ReadonlyArray<Readonly<{ entry: ReminderEntry; reason: ReminderSkip }>>;
  notYetDue: ReadonlyArray<Readonly<{ entry: ReminderEntry; retryInMs: number }>>;
}>;

/**
 * `firePointsMs`: the transition's undigested fire points (`beforeMs`, any order). Entries of one
 * row reach the expirer on different partitions (an overdue fire point on the due topic, the next
 * one on a ring), so a late one may fire after its successor: passed the next fire point by the
 * database clock, it is skipped, and a row's reminders are sent in fire-point order.
 */
export function planReminders(
  entries: readonly ReminderEntry[],
  rows: readonly ReadRow[],
  dbNowMs: number,
  firePointsMs: readonly number[] = [],
): ReminderPlan {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const send: Array<{ entry: ReminderEntry; row: ReadRow }> = [];
  const skipped: Array<{ entry: ReminderEntry; reason: ReminderSkip }> = [];
  const notYetDue: Array<{ entry: ReminderEntry; retryInMs: number }> = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (entry.expireAtMs > dbNowMs) {
      notYetDue.push({ entry, retryInMs: entry.expireAtMs - dbNowMs });
      continue;
    }
    const row = byId.get(entry.id);
    const reason: ReminderSkip | undefined =
      row === undefined
        ? 'not_expirable'
        : row.expireAtMs !== entry.remind.dueAtMs
          ? 'moved'
          : row.expireAtMs <= dbNowMs
            ? 'due_passed'
            : row.expireAtMs - nextFirePoint(firePointsMs, entry.remind.beforeMs) <= dbNowMs
              ? 'superseded'
              : undefined;
    if (reason !== undefined || row === undefined) {
      skipped.push({ entry, reason: reason ?? 'not_expirable' });
      continue;
    }
    // The same reminder twice in a batch (a replayed record beside its original) is one event.
    const key = `${entry.id}/${entry.remind.dueAtMs}/${entry.remind.beforeMs}`;
    if (seen.has(key)) continue;
    seen.add(key);
    send.push({ entry, row });
  }
  return { send, skipped, notYetDue };
}

/** The fire point after `beforeMs` (the largest smaller one), or 0: the due time itself. */
function nextFirePoint(firePointsMs: readonly number[], beforeMs: number): number {
  let next = 0;
  for (const b of firePointsMs) if (b < beforeMs && b > next) next = b;
  return next;
}

/** The digests a batch asks for: per fire point and window, the users to read. */
export type DigestGroup = Readonly<{ beforeMs: number; windowStartMs: number; users: readonly string[]; entries: readonly ReminderEntry[] }>;

export type DigestPlan = Readonly<{
  groups: readonly DigestGroup[];
  notYetDue: ReadonlyArray<Readonly<{ entry: ReminderEntry; retryInMs: number }>>;
}>;

export function planDigests(entries: readonly ReminderEntry[], dbNowMs: number): DigestPlan {
  const groups = new Map<string, { beforeMs: number; windowStartMs: number; users: Set<string>; entries: ReminderEntry[] }>();
  const notYetDue: Array<{ entry: ReminderEntry; retryInMs: number }> = [];
  for (const entry of entries) {
    if (entry.expireAtMs > dbNowMs) {
      notYetDue.push({ entry, retryInMs: entry.expireAtMs - dbNowMs });
      continue;
    }
    const user = entry.remind.user;
    if (user === undefined) throw new RangeError(`reminder of ${entry.id} names no user but its transition digests`);
    const key = `${entry.remind.beforeMs}/${entry.expireAtMs}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { beforeMs: entry.remind.beforeMs, windowStartMs: entry.expireAtMs, users: new Set(), entries: [] }));
    g.users.add(user);
    g.entries.push(entry);
  }
  return { groups: [...groups.values()].map((g) => ({ ...g, users: [...g.users] })), notYetDue };
}
