/**
 * The published watermark from Kafka Connect's committed offsets (publish/connector-watermark.ts):
 * Debezium's offsets as GET /connectors/<name>/offsets returns them (a MariaDB and a MySQL one,
 * as the local stack's connectors commit them), a snapshot's offset confirming nothing, and the
 * reader against a stand-in Connect REST API on a local port: every connector under the outbox
 * topic.prefix counts, the lowest wins, and a Connect that does not answer confirms nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { committedEventTime, connectorWatermark, publishingConnectors } from '../../../src/publish/connector-watermark';

const mariadb = {
  partition: { server: 'tbcdc-outbox' },
  offset: { ts_sec: 1796625323, file: 'binlog.000001', pos: 16371, gtids: '0-1-60', row: 1, server_id: 1, event: 2 },
};
const mysql = {
  partition: { server: 'tbcdc-outbox' },
  offset: { ts_sec: 1796625400, file: 'binlog.000003', pos: 9120, gtids: '5d3c0b5e-d3a1-11f0-8a51-0242ac110002:1-57', row: 1, server_id: 2, event: 2 },
};

test("the committed record's time: its ts_sec, in ms", () => {
  expect(committedEventTime({ offsets: [mariadb] }, 'tbcdc-outbox')).toEqual({ atMs: 1796625323_000 });
  expect(committedEventTime({ offsets: [mysql] }, 'tbcdc-outbox')).toEqual({ atMs: 1796625400_000 });
});

test('nothing confirmed: no offset, another partition, a snapshot under way, no ts_sec', () => {
  expect(committedEventTime({ offsets: [] }, 'tbcdc-outbox')).toEqual({ waiting: 'no offset committed yet' });
  expect(committedEventTime({ offsets: [mariadb] }, 'other')).toEqual({ waiting: 'no offset committed yet' });
  expect(committedEventTime({ offsets: [{ ...mariadb, offset: { ...mariadb.offset, snapshot: 'INITIAL' } }] }, 'tbcdc-outbox')).toEqual({
    waiting: 'its snapshot (INITIAL) is not done',
  });
  expect(committedEventTime({ offsets: [{ ...mariadb, offset: { ...mariadb.offset, snapshot: true } }] }, 'tbcdc-outbox')).toMatchObject({
    waiting: expect.any(String),
  });
  expect(committedEventTime({ offsets: [{ ...mariadb, offset: { file: 'binlog.000001', pos: 4 } }] }, 'tbcdc-outbox')).toEqual({
    waiting: 'its committed offset has no ts_sec',
  });
  expect(committedEventTime({ error_code: 404 }, 'tbcdc-outbox')).toEqual({ waiting: 'no offsets in its answer' });
});

test('the source connectors under the topic.prefix, and only those', () => {
  const expanded = {
    'tb-outbox': { info: { type: 'source', config: { 'topic.prefix': 'tbcdc-outbox' } } },
    'tb-outbox-new': { info: { type: 'source', config: { 'topic.prefix': 'tbcdc-outbox' } } },
    'tb-cdc': { info: { type: 'source', config: { 'topic.prefix': 'tbcdc' } } },
    sink: { info: { type: 'sink', config: { 'topic.prefix': 'tbcdc-outbox' } } },
  };
  expect(publishingConnectors(expanded, 'tbcdc-outbox')).toEqual(['tb-outbox', 'tb-outbox-new']);
  expect(publishingConnectors(null, 'tbcdc-outbox')).toEqual([]);
});

describe('against a stand-in Connect', () => {
  let server: Server;
  let url: string;
  let routes: Record<string, unknown>;
  let auth: string | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      auth = req.headers.authorization;
      const body = routes[req.url ?? ''];
      res.writeHead(body === undefined ? 404 : 200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body ?? { error_code: 404 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise((resolve) => server.close(resolve)));

  const info = (prefix: string) => ({ info: { type: 'source', config: { 'topic.prefix': prefix } } });

  test('the lowest committed time of the connectors under the prefix, less the margin; credentials sent as basic auth', async () => {
    routes = {
      '/connectors?expand=info': { old: info('tbcdc-outbox'), new: info('tbcdc-outbox'), cdc: info('tbcdc') },
      '/connectors/old/offsets': { offsets: [mariadb] },
      '/connectors/new/offsets': { offsets: [mysql] },
    };
    const watermark = connectorWatermark({ connectUrl: url.replace('http://', 'http://ops:s%40cret@'), topicPrefix: 'tbcdc-outbox', marginMs: 60_000 });
    await expect(watermark()).resolves.toEqual({ before: new Date(1796625323_000 - 60_000) });
    expect(auth).toBe(`Basic ${Buffer.from('ops:s@cret').toString('base64')}`);
  });

  test('one connector under the prefix still snapshotting holds it; none, or a Connect that fails, confirms nothing', async () => {
    routes = {
      '/connectors?expand=info': { old: info('tbcdc-outbox'), new: info('tbcdc-outbox') },
      '/connectors/old/offsets': { offsets: [mariadb] },
      '/connectors/new/offsets': { offsets: [{ ...mysql, offset: { ...mysql.offset, snapshot: 'INITIAL' } }] },
    };
    const watermark = connectorWatermark({ connectUrl: url, topicPrefix: 'tbcdc-outbox', marginMs: 0 });
    await expect(watermark()).resolves.toEqual({ waiting: 'connector new: its snapshot (INITIAL) is not done' });
    routes = { '/connectors?expand=info': { cdc: info('tbcdc') } };
    await expect(watermark()).resolves.toEqual({ waiting: `no connector on ${url} writes under topic.prefix tbcdc-outbox` });
    routes = {};
    await expect(watermark()).resolves.toMatchObject({
      waiting: expect.stringMatching(/^Kafka Connect does not answer \(GET \/connectors\?expand=info: HTTP 404/),
    });
  });
});
