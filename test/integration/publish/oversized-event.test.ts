/**
 * No event can stop publishing: a notice whose body (a LONGTEXT field of its event) makes the
 * event larger than its topic takes is dead-lettered in its transaction, with the reason and a
 * counter, and the notice still moves; the events around it, and every one after it, are
 * published. Written to event_outbox, it would fail the outbox connector on the same binlog
 * event at every restart, and hold every later event of the database.
 *
 * In a database of the file's own, on a table of its own (the body is not captured by CDC:
 * the capture connector reads only the columns the entities file needs to schedule).
 *
 * @lane isolated
 */
import type { Consumer } from 'kafkajs';
import { dlqTopic } from '../../../src/core/topology';
import { createKafka } from '../../../src/kafka/client';
import { countInStatus, metricSum } from '../../support/counts';
import { collectEvents, eventKeysOf } from '../../support/events';
import { ownDatabasePipeline, type OwnDatabasePipeline } from '../../support/own-database-pipeline';
import { logger, uniqueName } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

const entities = {
  entities: [
    {
      name: 'notice',
      table: 'notices',
      id: 'id',
      status: { column: 'status', type: 'string', values: ['OPEN', 'CLOSED'] },
      transitions: [
        {
          name: 'closed',
          from: ['OPEN'],
          to: 'CLOSED',
          due: { column: 'close_at', kind: 'datetime' },
          index: 'idx_notices_status_close_id',
          event: {
            type: 'NOTICE_CLOSED',
            ceType: 'test.notice.closed',
            avroName: 'test.events.NoticeClosed',
            idField: 'notice_id',
            summary: 'A notice closed at its time.',
            fields: [{ name: 'body', column: 'body' }],
          },
        },
      ],
    },
  ],
};

let own: OwnDatabasePipeline;
let dlq: Consumer;
const deadLetters: Array<{ code: string; reason: string; source: string; eventKey: string; truncated: string; bytes: number }> = [];

beforeAll(async () => {
  own = await ownDatabasePipeline('oversized', entities, {
    tables: async (db) => {
      await db.raw(`CREATE TABLE notices (
        id BIGINT PRIMARY KEY AUTO_INCREMENT,
        status VARCHAR(16) NOT NULL,
        close_at DATETIME(3) NOT NULL,
        body LONGTEXT NOT NULL,
        KEY idx_notices_status_close_id (status, close_at, id)
      )`);
    },
  });
  dlq = createKafka(own.pipeline.config.kafka, logger, '-test-oversized-dlq').consumer({ groupId: uniqueName('tb-dlq'), maxWaitTimeInMs: 200 });
  await dlq.connect();
  await dlq.subscribe({ topic: dlqTopic(own.pipeline.topology), fromBeginning: true });
  await dlq.run({
    eachMessage: async ({ message }) => {
      const header = (name: string) => message.headers?.[name]?.toString() ?? '';
      deadLetters.push({
        code: header('dlq_error_code'),
        reason: header('dlq_reason'),
        source: header('dlq_source_topic'),
        eventKey: header('event_key'),
        truncated: header('event_json_truncated'),
        bytes: message.value?.length ?? 0,
      });
    },
  });
});

afterAll(async () => {
  await dlq?.disconnect();
  await own?.stop();
});

test("an event over its topic's limit is dead-lettered with the reason and counted, its notice still closes, and every other event is published", async () => {
  const { pipeline, database } = own;
  const db = database.db;
  const topic = pipeline.topology.events.find((e) => e.type === 'NOTICE_CLOSED')!.topic;
  const events = await collectEvents(pipeline.config, [topic]);
  try {
    await pipeline.start(['repartitioner', 'expirer', 'cascader', 'outbox-keeper']);
    const row = (body: string) => ({ status: 'OPEN', close_at: db.raw('NOW(3) + INTERVAL 1500000 MICROSECOND'), body });
    // 1.2 million characters: the event is over the 1,000,000 bytes its topic takes.
    const [big] = await db('notices').insert(row('x'.repeat(1_200_000)));
    const small: number[] = [];
    for (let i = 0; i < 5; i += 1) small.push((await db('notices').insert(row(`notice ${i}`)))[0]!);
    const all = [big!, ...small];

    await waitFor('every notice closed', async () => ((await countInStatus(db, 'notices', 'CLOSED', all)) === all.length ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    await waitFor("the small notices' events on the wire", () => (eventKeysOf(events.events, small).size === small.length ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    const letter = await waitFor('the dead letter', () => deadLetters.find((d) => d.eventKey.startsWith(`notice-closed-${big}-`)), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    expect(letter).toEqual({
      code: 'EVENT_TOO_LARGE',
      reason: expect.stringMatching(new RegExp(`^\\d+ bytes as a Kafka record, over the 1000000 its topic ${topic.replace(/\./g, '\\.')} takes$`)),
      source: topic,
      eventKey: expect.any(String),
      truncated: 'true',
      bytes: 256 * 1024,
    });
    expect(await metricSum(pipeline.metrics.deadLetters, { stage: 'outbox', code: 'EVENT_TOO_LARGE' })).toBe(1);
    expect(
      Number(
        (
          await db('event_outbox')
            .where({ entity_id: String(big) })
            .count({ n: '*' })
        )[0]!.n,
      ),
    ).toBe(0);
    expect(eventKeysOf(events.events, [big!]).size).toBe(0);

    // Publishing goes on: a notice after it is published too.
    const [later] = await db('notices').insert(row('after'));
    await waitFor("the next notice's event on the wire", () => (eventKeysOf(events.events, [later!]).size === 1 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect(events.undecodable).toEqual([]);
  } finally {
    await events.stop();
  }
}, 180_000);
