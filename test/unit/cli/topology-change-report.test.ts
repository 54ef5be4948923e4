import { topologyChangeReport } from '../../../src/cli/topics-apply';

const empty = { created: [], existing: [], drift: [], grown: [], orphans: [] };

test('nothing to say when nothing changed', () => {
  expect(topologyChangeReport(empty)).toEqual([]);
});

test('partitions to grow: the drift, and the flag that grows them', () => {
  const lines = topologyChangeReport({ ...empty, drift: [{ topic: 'tb.minute.000', what: 'partitions', declared: '32', actual: '16' }] });
  expect(lines).toEqual([
    'drift: tb.minute.000 partitions: declared 32, actual 16',
    'implies: 1 topic(s) declare more partitions than they have; `topics apply --grow-partitions` adds them to the bucket lanes (entries in flight stay where they are, new ones go by the new count); a CDC or event topic is grown by hand, if at all: its keys would change partitions',
  ]);
});

test('fewer declared partitions than a topic has is drift alone: Kafka cannot shrink a topic', () => {
  expect(topologyChangeReport({ ...empty, drift: [{ topic: 'tb.due', what: 'partitions', declared: '8', actual: '16' }] })).toEqual([
    'drift: tb.due partitions: declared 8, actual 16',
  ]);
});

test('grown topics, and the ring topics a shrunk ring leaves unread', () => {
  const lines = topologyChangeReport({
    ...empty,
    grown: [{ topic: 'tb.due', what: 'partitions', declared: '32', actual: '16' }],
    orphans: ['tb.minute.118', 'tb.minute.119', 'tb.minute.120', 'tb.minute.121'],
  });
  expect(lines[0]).toBe('grown: tb.due partitions 16 -> 32');
  expect(lines[1]).toMatch(
    /^implies: 4 ring topic\(s\) are no longer in the topology \(tb\.minute\.118, tb\.minute\.119, tb\.minute\.120, …\): no role of this topology reads them/,
  );
  expect(lines).toHaveLength(2);
});
