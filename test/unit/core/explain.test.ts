import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { entityOf, transitionOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';
import { explainTransition, humanDuration, parseEventKey, withWire, type OutboxFact, type RowFacts } from '../../../src/core/explain';
import { parseTopology } from '../../../src/core/topology';
import { formatUtc } from '../../../src/core/utc-time';
import productionJson from '../../../topics/production.json';

const catalogue = parseEntityFile(readFileSync(join(__dirname, '../../../entities/default.json'), 'utf8'), 'entities/default.json');
const topology = parseTopology(productionJson, 'topics/production.json');
const coupon = entityOf(catalogue, 'coupon');
const expired = transitionOf(catalogue, 'coupon', 'expired');
const NOW = Date.UTC(2026, 11, 6, 10, 0, 0);
const row = (status: string, dueMs: number | null): RowFacts => ({
  id: '9007199254740993',
  at: coupon.locations[0]!.key,
  status,
  dueMs: new Map([[expired.due.column, dueMs]]),
});
const explain = (r: RowFacts, outbox: OutboxFact[] = []) => explainTransition(topology, coupon, expired, r, outbox, NOW, formatUtc);

test('humanDuration: the two largest units', () => {
  expect(humanDuration(850)).toBe('850 ms');
  expect(humanDuration(4 * 60_000 + 5_000)).toBe('4 min 5 s');
  expect(humanDuration(2 * 3_600_000 + 13 * 60_000 + 9_000)).toBe('2 h 13 min');
  expect(humanDuration(3 * 86_400_000 + 2 * 3_600_000)).toBe('3 d 2 h');
  expect(humanDuration(86_400_000 + 5_000)).toBe('1 d');
});

test('parseEventKey: the due and occurred times of this row and transition only', () => {
  expect(parseEventKey(expired, '42', 'coupon-expired-42-1000-1004')).toEqual({ dueAtMs: 1000, occurredAtMs: 1004 });
  expect(parseEventKey(expired, '42', 'coupon-expired-420-1000-1004')).toBeUndefined();
  expect(parseEventKey(expired, '42', 'coupon-expired-remind-42-1000-3600000')).toBeUndefined();
});

test('scheduled: where its entry belongs, by the tier that covers its due time', () => {
  const far = explain(row('ACTIVE', NOW + 3 * 86_400_000 + 2 * 3_600_000));
  expect(far.state).toBe('scheduled');
  expect(far.placement).toMatchObject({ lane: 'ring', tier: 'day' });
  expect(far.verdict).toMatch(/^due in 3 d 2 h by the database clock; its entry belongs in the day ring's topic tb\.day\.\d{3} \(bucket .*\), partition \d$/);
  const soon = explain(row('ACTIVE', NOW + 90_000));
  expect(soon.placement).toMatchObject({ lane: 'ring', tier: 'minute', bucketStartMs: NOW + 60_000, releaseAtMs: NOW + 55_000 });
  expect(soon.verdict).toContain('due in 1 min 30 s');
});

test('transitioned: the latest event, how late and by which path', () => {
  const due = NOW - 10_000;
  const e = explain(row('EXPIRED', due), [
    {
      eventKey: `coupon-expired-9007199254740993-${due}-${due + 4}`,
      topic: 'timebucket.events.coupon-expired',
      createdAtMs: due + 4,
      dueAtMs: due,
      occurredAtMs: due + 4,
      path: 'stream',
    },
  ]);
  expect(e.state).toBe('transitioned');
  expect(e.verdict).toBe(
    `moved 4 ms after due by stream at ${formatUtc(due + 4)}; event coupon-expired-9007199254740993-${due}-${due + 4} on timebucket.events.coupon-expired`,
  );
});

test('an event of an earlier due time does not explain a row extended since: it is scheduled again', () => {
  const old = NOW - 86_400_000;
  const e = explain(row('ACTIVE', NOW + 60 * 60_000), [{ eventKey: 'k', topic: 't', createdAtMs: old, dueAtMs: old, occurredAtMs: old, path: 'scanner' }]);
  expect(e.state).toBe('scheduled');
});

test('not expirable: paid or used before its time; in the target state without an event: moved by something else', () => {
  expect(explain(row('USED', NOW + 60_000)).verdict).toBe('not expirable: status USED, and expired moves it only from ACTIVE');
  const other = explain(row('EXPIRED', NOW - 1_000));
  expect(other.state).toBe('not expirable');
  expect(other.verdict).toContain('no event_outbox row of expired for it');
});

test('overdue and not transitioned: the due lane, the scanner, backfill', () => {
  const e = explain(row('ACTIVE', NOW - 5 * 60_000));
  expect(e.state).toBe('overdue');
  expect(e.placement).toMatchObject({ lane: 'due', topic: 'tb.due' });
  expect(e.verdict).toMatch(/^due 5 min ago by the database clock and not transitioned: .*TB_SCANNER_GRACE_MS, or run backfill$/);
  expect(explain(row('ACTIVE', null)).verdict).toBe('not scheduled: expire_time is NULL, so it is never due');
});

test('the wire, scheduled: the entry found with its offset and whether its reader took it; not found in a whole look: what will take the row; a look cut at its limit says so', () => {
  const scheduled = explain(row('ACTIVE', NOW + 2 * 3_600_000));
  const found = withWire(scheduled, {
    entry: {
      found: { tier: 'hour', topic: 'tb.hour.02', partition: 3, offset: '42', consumed: false },
      records: 43,
      complete: true,
      searched: ['tb.hour.02 partition 3'],
    },
  });
  expect(found.verdict).toBe(`${scheduled.verdict}; entry found in the hour ring's topic tb.hour.02, partition 3, offset 42 (not yet read)`);
  expect(found.entry?.found?.offset).toBe('42');
  const missing = withWire(scheduled, { entry: { found: null, records: 7, complete: true, searched: ['tb.hour.02 partition 3', 'tb.day.100 partition 1'] } });
  expect(missing.verdict).toMatch(
    /; no entry of it in tb\.hour\.02 partition 3, tb\.day\.100 partition 1 \(7 records read\): no change of it has reached the rings since it became ACTIVE .* the scanner takes it once it is overdue by TB_SCANNER_GRACE_MS, or run backfill$/,
  );
  const cut = withWire(scheduled, { entry: { found: null, records: 100_000, complete: false, searched: ['tb.hour.02 partition 3'] } });
  expect(cut.verdict).toMatch(
    /; no entry of it in the 100000 records read of tb\.hour\.02 partition 3, but the look is bounded \(--scan-limit records per partition, the latest parking buckets of the coarsest ring\): no proof it is not there$/,
  );
});

test('the wire, transitioned: the event with its partition and offset, not yet published, or a look cut at its limit (what was read, no proof either way)', () => {
  const due = NOW - 10_000;
  const moved = explain(row('EXPIRED', due), [
    {
      eventKey: `coupon-expired-9007199254740993-${due}-${due + 4}`,
      topic: 'tb.events.coupon-expired',
      createdAtMs: due + 4,
      dueAtMs: due,
      occurredAtMs: due + 4,
      path: 'stream',
    },
  ]);
  const searched = 'tb.events.coupon-expired (3 partitions) from 2024-05-01T10:00:00.000Z to its end when the look began';
  expect(
    withWire(moved, { event: { found: { topic: 'tb.events.coupon-expired', partition: 1, offset: '7' }, records: 8, complete: true, searched } }).verdict,
  ).toBe(`${moved.verdict}, partition 1, offset 7`);
  expect(withWire(moved, { event: { found: null, records: 0, complete: true, searched } }).verdict).toBe(
    `${moved.verdict} not yet on the wire (0 records read of ${searched}): the outbox connector is behind or stopped`,
  );
  const cutShort = "the look's limit of 5 records (--scan-limit) reached in partition 2";
  expect(withWire(moved, { event: { found: null, records: 5, complete: false, searched, cutShort } }).verdict).toBe(
    `${moved.verdict}: not found in the 5 records read of ${searched}, but ${cutShort}: no proof it is not on the wire`,
  );
});
