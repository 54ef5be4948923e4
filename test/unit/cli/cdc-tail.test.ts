/**
 * `cdc-tail`'s wait for Debezium to create a CDC topic, through the retry runner on a fake clock:
 * the topics that exist once one does, the wait said once at info, a bounded end with the same
 * error as before, and a failure to list the topics ending the command at once.
 */
import { Writable } from 'node:stream';
import { waitForCdcTopic } from '../../../src/cli/cdc-tail';
import { KafkaUnavailableError } from '../../../src/core/errors';
import { createLogger } from '../../../src/ops/logger';

function harness(listings: Array<string[] | Error>) {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  let now = 0;
  let calls = 0;
  const admin = {
    listTopics: async () => {
      const next = listings[Math.min(calls, listings.length - 1)]!;
      calls += 1;
      if (next instanceof Error) throw next;
      return next;
    },
  };
  const sleep = async (ms: number) => void (now += ms);
  return { lines, admin, clock: { now: () => now }, sleep, logger: createLogger('debug', {}, stream), calls: () => calls, elapsed: () => now };
}

const TOPICS = ['tbcdc.timebucket.coupons', 'tbcdc.timebucket.orders'];

test('waits until a CDC topic exists, says so once at info, and returns the ones that exist', async () => {
  const h = harness([['other'], ['other'], ['other', 'tbcdc.timebucket.orders']]);
  await expect(waitForCdcTopic(h.admin, TOPICS, h.logger, h.clock, h.sleep)).resolves.toEqual(['tbcdc.timebucket.orders']);
  expect(h.calls()).toBe(3);
  // One line, at info; the runner's warnings per attempt are not logged.
  expect(h.lines.map((l) => [l.level, l.msg])).toEqual([[30, expect.stringContaining('no CDC topic yet: waiting up to 60 s')]]);
});

test('no wait and no line when a topic exists already', async () => {
  const h = harness([TOPICS]);
  await expect(waitForCdcTopic(h.admin, TOPICS, h.logger, h.clock, h.sleep)).resolves.toEqual(TOPICS);
  expect(h.lines).toEqual([]);
});

test('none within 60 s: the same error as before, no wait past the deadline', async () => {
  const h = harness([[]]);
  const waited = waitForCdcTopic(h.admin, TOPICS, h.logger, h.clock, h.sleep);
  await expect(waited).rejects.toThrow(KafkaUnavailableError);
  await expect(waited).rejects.toThrow('no CDC topic (tbcdc.timebucket.coupons, tbcdc.timebucket.orders) appeared within 60 s: is the connector running?');
  expect(h.elapsed()).toBe(60_000);
});

test('a failure to list the topics ends the wait at once', async () => {
  const down = Object.assign(new Error('Connection error'), { retriable: true });
  const h = harness([[], down]);
  await expect(waitForCdcTopic(h.admin, TOPICS, h.logger, h.clock, h.sleep)).rejects.toBe(down);
  expect(h.calls()).toBe(2);
});
