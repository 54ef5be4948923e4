/**
 * The waits of `topics apply` for the leaders of topics it just created, against a fake admin
 * whose broker learns of the topics a few metadata requests later (as a KRaft broker does): the
 * cluster's whole metadata is read until it lists them, said once at info, and only then are they
 * asked for by name (a request naming an unknown topic is an error kafkajs logs at error level).
 */
import type { Admin, ITopicMetadata } from 'kafkajs';
import { KafkaUnavailableError } from '../../../src/core/errors';
import { applyTopics, waitForLeaders, waitForNewTopics } from '../../../src/kafka/topics-apply';

type FakeTopic = { partitions: number; knownAfter: number; leaderless?: boolean };

/** A broker that knows each topic from its `knownAfter`-th metadata request on (counting every request). */
function fakeAdmin(topics: Record<string, FakeTopic>) {
  let requests = 0;
  const calls: Array<'all' | string[]> = [];
  const infos: string[] = [];
  const known = () => Object.entries(topics).filter(([, t]) => requests >= t.knownAfter);
  const describe = ([name, t]: [string, FakeTopic]): ITopicMetadata => ({
    name,
    partitions: Array.from({ length: t.partitions }, (_, i) => ({
      partitionId: i,
      leader: t.leaderless === true ? -1 : 1,
      replicas: [1],
      isr: [1],
      offlineReplicas: [],
      partitionErrorCode: 0,
    })),
  });
  const admin = {
    listTopics: async () => known().map(([name]) => name),
    createTopics: async ({ topics: created }: { topics: Array<{ topic: string; numPartitions: number }> }) => {
      for (const t of created) topics[t.topic] = { partitions: t.numPartitions, knownAfter: requests + 3 };
      return true;
    },
    fetchTopicMetadata: async (opts?: { topics: string[] }) => {
      requests += 1;
      calls.push(opts === undefined ? 'all' : [...opts.topics]);
      const listed = known();
      if (opts !== undefined) {
        const unknown = opts.topics.filter((t) => !listed.some(([name]) => name === t));
        if (unknown.length > 0) throw Object.assign(new Error('This server does not host this topic-partition'), { retriable: true });
        return { topics: listed.filter(([name]) => opts.topics.includes(name)).map(describe) };
      }
      return { topics: listed.map(describe) };
    },
    describeConfigs: async () => ({ resources: [], throttleTime: 0 }),
    logger: () => ({ namespace: () => ({ info: (message: string) => void infos.push(message) }) }),
  };
  return { admin: admin as unknown as Admin, calls, infos };
}

/** A clock that moves only when the waits sleep. */
function fakeClock() {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    wait: {
      clock: { now: () => now },
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += ms;
      },
    },
  };
}

test('new topics: the whole metadata is read until it lists them, said once at info, then they are asked for by name', async () => {
  const { admin, calls, infos } = fakeAdmin({});
  const clock = fakeClock();
  const report = await applyTopics(
    admin,
    [
      { topic: 'a', partitions: 2, config: {} },
      { topic: 'b', partitions: 1, config: {} },
    ],
    { wait: clock.wait },
  );
  expect(report.created).toEqual(['a', 'b']);
  // Three requests for the whole metadata before the broker knows them, then one by name.
  expect(calls).toEqual(['all', 'all', 'all', ['a', 'b']]);
  expect(infos).toEqual(['waiting until the brokers know a leader for every partition of 2 topic(s) just created or grown, up to 120000 ms']);
  expect(clock.sleeps).toHaveLength(2);
});

test('topics the broker knows already: no wait and no line', async () => {
  const { admin, calls, infos } = fakeAdmin({ a: { partitions: 1, knownAfter: 0 } });
  await waitForNewTopics(admin, ['a'], fakeClock().wait);
  expect(calls).toEqual(['all', ['a']]);
  expect(infos).toEqual([]);
});

test('grown partitions are waited for until the metadata shows as many as declared', async () => {
  const { admin, calls } = fakeAdmin({ a: { partitions: 1, knownAfter: 0 } });
  const clock = fakeClock();
  let grownAt = 0;
  const fetch = admin.fetchTopicMetadata.bind(admin);
  admin.fetchTopicMetadata = async (opts) => {
    const meta = await fetch(opts);
    grownAt += 1;
    // The third request onwards sees the topic's 4 partitions.
    return grownAt >= 3 ? { topics: meta.topics.map((t) => ({ ...t, partitions: [0, 1, 2, 3].map((i) => ({ ...t.partitions[0]!, partitionId: i })) })) } : meta;
  };
  await waitForNewTopics(admin, ['a'], { ...clock.wait, partitions: new Map([['a', 4]]) });
  expect(calls).toEqual(['all', 'all', 'all', ['a']]);
});

test('by name: a topic that never gets a leader ends the wait at the deadline with a retriable error naming it', async () => {
  const { admin } = fakeAdmin({ late: { partitions: 1, knownAfter: 0, leaderless: true } });
  const clock = fakeClock();
  const waited = waitForLeaders(admin, ['late'], undefined, 10_000, clock.wait);
  await expect(waited).rejects.toThrow(KafkaUnavailableError);
  await expect(waited).rejects.toThrow('no leader after 10000 ms for 1 topic(s), e.g. late');
  // No sleep runs past the deadline.
  expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
});

test('by name: a topic the broker never learns of ends the wait at the deadline with the request failure', async () => {
  const { admin, calls } = fakeAdmin({ late: { partitions: 1, knownAfter: Infinity } });
  await expect(waitForLeaders(admin, ['late'], undefined, 10_000, fakeClock().wait)).rejects.toThrow('This server does not host this topic-partition');
  expect(calls.length).toBeGreaterThan(1);
});

test('a failure that waiting cannot fix is thrown at once', async () => {
  const { admin, calls } = fakeAdmin({});
  const refused = Object.assign(new Error('Topic authorization failed'), { retriable: false });
  admin.fetchTopicMetadata = async () => {
    calls.push('all');
    throw refused;
  };
  await expect(waitForNewTopics(admin, ['a'], fakeClock().wait)).rejects.toBe(refused);
  expect(calls).toEqual(['all']);
});
