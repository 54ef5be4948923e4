/**
 * `explain`: why one row did or did not move, in one line per transition, from what the
 * database says of it (its status and due value, by the database clock, and its event_outbox
 * rows) and what the topology says of where its entry must be.
 *
 *   transitioned    an event_outbox row of this transition holds the row's id: when, how late
 *                   after its due time, by which path (stream, scanner, replay)
 *   not expirable   its status is none the transition moves from (paid, used, already moved
 *                   by something else): nothing will move it
 *   scheduled       expirable and not yet due: the tier, topic, partition and bucket its entry
 *                   belongs in, as the repartitioner routes it now
 *   overdue         expirable and due by the database clock, not transitioned: the due lane or
 *                   a released bucket holds it if its change was captured; the scanner takes
 *                   it after its grace, backfill schedules it at once
 *
 * Pure: the row, the database clock and the outbox rows come in as data.
 */
import type { Entity, StatusValue, Transition } from './entity-catalogue';
import { partitionOfRoute, route, shardOfEntry } from './router';
import type { Topology } from './topology';

/** An event_outbox row of the row: its event_key's due and occurred times, and the path its payload names (when it could be read). */
export type OutboxFact = Readonly<{ eventKey: string; topic: string; createdAtMs: number; dueAtMs: number; occurredAtMs: number; path: string | null }>;

export type Placement = Readonly<{
  lane: 'due' | 'ring';
  tier: string;
  topic: string;
  partition: number;
  bucketStartMs: number | null;
  releaseAtMs: number | null;
}>;

export type TransitionExplanation = Readonly<{
  transition: string;
  state: 'transitioned' | 'not expirable' | 'scheduled' | 'overdue';
  status: StatusValue;
  dueMs: number | null;
  /** Due time minus the database clock (negative: overdue). */
  dueInMs: number | null;
  placement: Placement | null;
  outbox: readonly OutboxFact[];
  verdict: string;
}>;

export type RowFacts = Readonly<{ id: string; at: string; status: StatusValue; dueMs: ReadonlyMap<string, number | null> }>;

/** The due and occurred times of a transition event's key (`<entity>-<transition>-<id>-<due>-<occurred>`), or undefined for another key. */
export function parseEventKey(t: Pick<Transition, 'entity' | 'name'>, id: string, key: string): { dueAtMs: number; occurredAtMs: number } | undefined {
  const prefix = `${t.entity}-${t.name}-${id}-`;
  if (!key.startsWith(prefix)) return undefined;
  const m = /^(-?\d+)-(-?\d+)$/.exec(key.slice(prefix.length));
  return m === null ? undefined : { dueAtMs: Number(m[1]), occurredAtMs: Number(m[2]) };
}

/** "2 d 3 h", "2 h 13 min", "4 min 5 s", "850 ms": the two largest units. */
export function humanDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${abs} ms`;
  const units: Array<[string, number]> = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1_000],
  ];
  const parts: string[] = [];
  let rest = abs;
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 || parts.length > 0) parts.push(`${n} ${name}`);
    rest -= n * size;
    if (parts.length === 2) break;
  }
  return parts.filter((p) => !p.startsWith('0 ')).join(' ');
}

function placementOf(topology: Topology, entity: Entity, row: RowFacts, dueMs: number, nowMs: number): Placement {
  const r = route(topology, dueMs, nowMs);
  const partition = partitionOfRoute(topology, r, shardOfEntry(entity, { id: row.id, at: row.at }, topology.shards));
  return r.lane === 'due'
    ? { lane: 'due', tier: 'due', topic: r.topic, partition, bucketStartMs: null, releaseAtMs: null }
    : { lane: 'ring', tier: r.tierName, topic: r.topic, partition, bucketStartMs: r.bucketStartMs, releaseAtMs: r.releaseAtMs };
}

/** The latest of a row's events of one transition (the one a verdict speaks of), if any. */
export function latestEvent(outbox: readonly OutboxFact[]): OutboxFact | undefined {
  return [...outbox].sort((a, b) => b.occurredAtMs - a.occurredAtMs)[0];
}

export function explainTransition(
  topology: Topology,
  entity: Entity,
  t: Transition,
  row: RowFacts,
  outbox: readonly OutboxFact[],
  dbNowMs: number,
  formatTime: (ms: number) => string,
): TransitionExplanation {
  const dueMs = row.dueMs.get(t.due.column) ?? null;
  const base = { transition: t.name, status: row.status, dueMs, dueInMs: dueMs === null ? null : dueMs - dbNowMs, outbox };
  const latest = latestEvent(outbox);
  const expirable = t.from.some((s) => s === row.status);
  if (latest !== undefined && !(expirable && dueMs !== null && dueMs > latest.dueAtMs)) {
    const late = latest.occurredAtMs - latest.dueAtMs;
    const by = latest.path === null ? '' : ` by ${latest.path}`;
    return {
      ...base,
      state: 'transitioned',
      placement: null,
      verdict: `moved ${humanDuration(late)} after due${by} at ${formatTime(latest.occurredAtMs)}; event ${latest.eventKey} on ${latest.topic}`,
    };
  }
  if (!expirable) {
    const from = t.from.map(String).join(', ');
    const other =
      row.status === t.to
        ? `; no event_outbox row of ${t.name} for it: moved by something else, or its row is gone with retention (TB_OUTBOX_RETENTION_MS)`
        : '';
    return {
      ...base,
      state: 'not expirable',
      placement: null,
      verdict: `not expirable: status ${String(row.status)}, and ${t.name} moves it only from ${from}${other}`,
    };
  }
  if (dueMs === null) return { ...base, state: 'not expirable', placement: null, verdict: `not scheduled: ${t.due.column} is NULL, so it is never due` };
  if (dueMs > dbNowMs) {
    const placement = placementOf(topology, entity, row, dueMs, dbNowMs);
    const where =
      placement.lane === 'due'
        ? `the due lane ${placement.topic}`
        : `the ${placement.tier} ring's topic ${placement.topic} (bucket ${formatTime(placement.bucketStartMs!)}, released at ${formatTime(placement.releaseAtMs!)})`;
    return {
      ...base,
      state: 'scheduled',
      placement,
      verdict: `due in ${humanDuration(dueMs - dbNowMs)} by the database clock; its entry belongs in ${where}, partition ${placement.partition}`,
    };
  }
  const placement = placementOf(topology, entity, row, dueMs, dbNowMs);
  return {
    ...base,
    state: 'overdue',
    placement,
    verdict:
      `due ${humanDuration(dbNowMs - dueMs)} ago by the database clock and not transitioned: if its change was captured its entry is due ` +
      `(the due lane ${placement.topic} or a released bucket) and the expirer is behind or paused; if not, the scanner takes it once it is overdue by TB_SCANNER_GRACE_MS, or run backfill`,
  };
}

/**
 * What the wire says (cli/explain-wire.ts reads it with bounded scans): for a scheduled row, its
 * entry in the ring partition it belongs in (or in a coarser tier's, not yet cascaded); for a
 * transitioned one, its latest event on the event topic. `complete`: every partition read was
 * read to its end (an entry's: or its bucket's window), so "not found" means not there;
 * otherwise the look stopped at its record limit and says so.
 */
export type EntryFinding = Readonly<{ tier: string; topic: string; partition: number; offset: string; consumed: boolean }>;
export type EntrySearch = Readonly<{ found: EntryFinding | null; records: number; complete: boolean; searched: readonly string[] }>;
export type EventFinding = Readonly<{ topic: string; partition: number; offset: string }>;
/** `searched`: the topic, its partitions and the range read; `cutShort`: where the record limit stopped the look (then `complete` is false). */
export type EventSearch = Readonly<{ found: EventFinding | null; records: number; complete: boolean; searched: string; cutShort?: string }>;

/** `unavailable`: the look failed (Kafka away, a topic missing): the database's verdict stands alone. */
export type WireFacts = Readonly<{ entry?: EntrySearch; event?: EventSearch; unavailable?: string }>;

/** The explanation with what the wire says added to its verdict. */
export function withWire(e: TransitionExplanation, wire: WireFacts): TransitionExplanation & WireFacts {
  let verdict = e.verdict;
  if (wire.entry !== undefined) {
    const s = wire.entry;
    if (s.found !== null) {
      const f = s.found;
      const state = f.consumed ? 'taken by its reader' : 'not yet read';
      verdict += `; entry found in the ${f.tier} ring's topic ${f.topic}, partition ${f.partition}, offset ${f.offset} (${state})`;
    } else if (s.complete) {
      verdict +=
        `; no entry of it in ${s.searched.join(', ')} (${s.records} records read): no change of it has reached the rings since it became ` +
        `${String(e.status)} (unless the capture is behind); then the scanner takes it once it is overdue by TB_SCANNER_GRACE_MS, or run backfill`;
    } else {
      verdict += `; no entry of it in the ${s.records} records read of ${s.searched.join(', ')}, but the look is bounded (--scan-limit records per partition, the latest parking buckets of the coarsest ring): no proof it is not there`;
    }
  }
  if (wire.event !== undefined) {
    const s = wire.event;
    if (s.found !== null) verdict += `, partition ${s.found.partition}, offset ${s.found.offset}`;
    else if (s.complete) verdict += ` not yet on the wire (${s.records} records read of ${s.searched}): the outbox connector is behind or stopped`;
    else
      verdict += `: not found in the ${s.records} records read of ${s.searched}, but ${s.cutShort ?? 'the look was cut short'}: no proof it is not on the wire`;
  }
  if (wire.unavailable !== undefined) verdict += `; could not look on Kafka (${wire.unavailable})`;
  return { ...e, ...wire, verdict };
}
