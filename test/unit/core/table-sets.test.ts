/**
 * Table sets and several databases, the pure parts: the entities file's `table: coupon_{00..63}`
 * and `locations`, what it refuses, the entries of a spread entity (wire v3, their location),
 * the shard dealt out by database, the CDC topics per database and where a change happened,
 * and the scanner's cursor per table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { entriesFromChange } from '../../../src/core/bucket-entry';
import { decodeBucketEntry, encodeBucketEntry } from '../../../src/core/bucket-entry-codec';
import type { CdcChange } from '../../../src/core/cdc-envelope';
import { databasesOf, entityOf, isSpread, locationOf } from '../../../src/core/entity-catalogue';
import { expandTables, parseEntityFile } from '../../../src/core/entity-file';
import { CdcInvalidError, ConfigError } from '../../../src/core/errors';
import { assertShardsFit, shardOf, shardOfEntry } from '../../../src/core/router';
import { parseTopology } from '../../../src/core/topology';
import { cdcTopicList, locationOfChange } from '../../../src/ingest/cdc-topics';
import { scanCursorsOf } from '../../../src/core/scan-cursors';
import { loadConfig } from '../../../src/config';
import testTopologyJson from '../../../topics/test.json';
import { bucketRecord } from '../../../src/core/bucket-record';
import { heldRecordReader } from '../../../src/core/held-record';
import { entitySchemaProblems } from '../../../src/core/entity-schema-check';
import type { ColumnInfo } from '../../../src/core/column-info';

const root = join(__dirname, '../../..');
const splitText = readFileSync(join(root, 'examples/shop/entities-split.json'), 'utf8');
const split = parseEntityFile(splitText, 'examples/shop/entities-split.json');
const wallet = entityOf(split, 'user_coupon');

function problemsOf(file: unknown): string[] {
  try {
    parseEntityFile(file, 'test.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
  return [];
}

/** The split file with the wallet entity's place replaced. */
function withWallet(place: Record<string, unknown>): unknown {
  const file = JSON.parse(splitText) as { entities: Array<Record<string, unknown>> };
  const wallet = { ...file.entities[1]! };
  delete wallet['locations'];
  delete wallet['table'];
  file.entities[1] = { ...wallet, ...place };
  return file;
}

describe('the entities file', () => {
  test('a numbered set expands with the width its bounds are written in', () => {
    expect(expandTables('coupon_{00..63}')).toHaveLength(64);
    expect((expandTables('coupon_{00..63}') as string[]).slice(0, 2)).toEqual(['coupon_00', 'coupon_01']);
    expect(expandTables('coupon_{0..10}')).toContain('coupon_10');
    expect(expandTables('coupon_{0..10}')).toContain('coupon_9');
    expect(expandTables('t{1..2}_log')).toEqual(['t1_log', 't2_log']);
    expect(expandTables('coupons')).toEqual(['coupons']);
  });

  test('locations: every table, in file order, keyed <database>.<table>, its databases listed', () => {
    expect(wallet.locations.map((l) => l.key)).toEqual(['main.user_coupon_0', 'main.user_coupon_1', 'shop_b.user_coupon_2', 'shop_b.user_coupon_3']);
    expect(wallet.databases).toEqual(['main', 'shop_b']);
    expect(isSpread(wallet)).toBe(true);
    expect(isSpread(entityOf(split, 't_order'))).toBe(false);
    expect(databasesOf(split)).toEqual(['main', 'shop_b']);
    // A set on the main database alone is spread too (one batch, one table).
    const onMain = parseEntityFile(withWallet({ table: 'user_coupon_{00..15}' }), 't.json');
    expect(entityOf(onMain, 'user_coupon').locations).toHaveLength(16);
    expect(entityOf(onMain, 'user_coupon').databases).toEqual(['main']);
  });

  test.each([
    ['both table and locations', { table: 'a', locations: [{ database: 'main', table: 'b' }] }, /^entities\.1: give either table/],
    ['neither', {}, /^entities\.1: give either table/],
    ['a set running down', { table: 'c_{9..1}' }, /c_\{9\.\.1\}: the set runs from 9 down to 1/],
    ['a set too large', { table: 'c_{0..2000}' }, /more than 1024 tables/],
    [
      'a table in two locations',
      {
        locations: [
          { database: 'main', table: 'c_{0..2}' },
          { database: 'main', table: 'c_2' },
        ],
      },
      /table 'main\.c_2' is mapped twice/,
    ],
    ['a database name that is not one', { locations: [{ database: 'Shop-B', table: 'c' }] }, /database connection name/],
    ['an SQL-looking set', { table: 'c_{0..1}; DROP' }, /not a plain SQL identifier/],
  ])('%s is refused, named', (_what, place, problem) => {
    expect(problemsOf(withWallet(place))).toEqual(expect.arrayContaining([expect.stringMatching(problem)]));
  });

  test('an effect on (or from) a spread entity is refused: one transaction cannot hold rows of two databases', () => {
    const file = JSON.parse(splitText) as { entities: Array<{ transitions: Array<Record<string, unknown>> }> };
    file.entities[0]!.transitions[0]!['effects'] = [
      { entity: 'user_coupon', column: 'lock_order_no', index: 'idx_user_status', from: ['已锁定'], to: '待使用' },
    ];
    expect(problemsOf(file)).toEqual([expect.stringMatching(/effects\.0\.entity: an effect needs both entities in one table each, on one database/)]);
  });
});

describe("a spread entity's entries", () => {
  const change = (table: string): CdcChange => ({
    kind: 'change',
    op: 'c',
    before: null,
    after: { id: '1152921504606846977', status: '待使用', expire_at_ms: 5_000, lock_expire_time: null },
    source: { db: 'shop_b', table },
    fieldSchemas: {},
  });
  const at = locationOf(wallet, 'shop_b.user_coupon_3');

  test('carry their location, on the wire as v3, and decode back', () => {
    const [entry] = entriesFromChange(wallet, change('user_coupon_3'), at);
    expect(entry).toEqual({ entity: 'user_coupon', transition: 'expired', id: '1152921504606846977', expireAtMs: 5_000, at: 'shop_b.user_coupon_3' });
    const wire = encodeBucketEntry(entry!, split);
    expect(JSON.parse(wire.toString())).toEqual({
      v: 3,
      entity: 'user_coupon',
      transition: 'expired',
      id: '1152921504606846977',
      expireAtMs: 5_000,
      at: 'shop_b.user_coupon_3',
    });
    expect(decodeBucketEntry(wire, split)).toEqual(entry);
  });

  test.each([
    ['no location', { v: 3, entity: 'user_coupon', transition: 'expired', id: '7', expireAtMs: 1 }, /undefined is not a location of user_coupon/],
    [
      'a location it does not have',
      { v: 3, entity: 'user_coupon', transition: 'expired', id: '7', expireAtMs: 1, at: 'main.user_coupon_3' },
      /"main\.user_coupon_3" is not a location/,
    ],
    ['v1 bytes (they carry no location)', { v: 1, entity: 'user_coupon', id: '7', expireAtMs: 1 }, /undefined is not a location of user_coupon/],
    ['v3 bytes for a one-table entity', { v: 3, entity: 't_order', transition: 'cancelled', id: '7', expireAtMs: 1 }, /v 3 is not the version/],
    [
      'a location on a one-table entity',
      { v: 3, entity: 't_order', transition: 'cancelled', id: '7', expireAtMs: 1, at: 'main.t_order' },
      /t_order lives in one table/,
    ],
  ])('are refused with %s (the DLQ, not a guess)', (_what, wire, reason) => {
    expect(() => decodeBucketEntry(Buffer.from(JSON.stringify(wire)), split)).toThrow(
      expect.objectContaining({ name: CdcInvalidError.name, message: expect.stringMatching(reason) }),
    );
  });

  test('a change whose location is not given is a programmer error', () => {
    expect(() => entriesFromChange(wallet, change('user_coupon_3'))).toThrow(RangeError);
  });
});

describe('shards', () => {
  const order = entityOf(split, 't_order');

  test("a one-database entity keeps today's shard; a spread one's shard mod databases is its database", () => {
    expect(shardOfEntry(order, { id: '12345' }, 16)).toBe(shardOf('12345', 16));
    for (let n = 1; n <= 200; n += 1) {
      const id = String(1_000_000 + n);
      const onMain = shardOfEntry(wallet, { id, at: 'main.user_coupon_1' }, 16);
      const onB = shardOfEntry(wallet, { id, at: 'shop_b.user_coupon_2' }, 16);
      expect([onMain % 2, onB % 2]).toEqual([0, 1]);
      expect(Math.max(onMain, onB)).toBeLessThan(16);
    }
    // With 4 partitions (a multiple of 2) a partition holds one database's coupons only.
    const partitions = new Set(Array.from({ length: 50 }, (_, n) => shardOfEntry(wallet, { id: String(n + 1), at: 'shop_b.user_coupon_3' }, 16) % 4));
    expect([...partitions].every((p) => p % 2 === 1)).toBe(true);
  });

  test('a topology with fewer shards than an entity has databases is refused at start', () => {
    const one = parseTopology({ ...testTopologyJson, shards: 1 }, 'one shard');
    expect(() => assertShardsFit(split, one)).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining("entity 'user_coupon' lives on 2 databases but the topology has 1 shards"),
      }),
    );
    expect(() => assertShardsFit(split, parseTopology(testTopologyJson, 'test'))).not.toThrow();
  });
});

describe('CDC topics per database', () => {
  const config = loadConfig({
    TB_DATABASES: 'shop_b',
    TB_DB_NAME: 'shop',
    TB_CDC_TOPIC_PREFIX: 'cdc',
    TB_DB_SHOP_B_NAME: 'shop2',
    TB_DB_SHOP_B_CDC_TOPIC_PREFIX: 'cdcb',
  });

  test("a table set's tables on one database share one topic named after the entity; a lone table keeps its own", () => {
    const topics = cdcTopicList(config, split);
    expect(topics.map((t) => [t.topic, t.entity.name, t.database, [...t.tables.keys()], t.routed])).toEqual([
      ['cdc.shop.t_order', 't_order', 'main', ['t_order'], false],
      ['cdc.shop.user_coupon', 'user_coupon', 'main', ['user_coupon_0', 'user_coupon_1'], true],
      ['cdcb.shop2.user_coupon', 'user_coupon', 'shop_b', ['user_coupon_2', 'user_coupon_3'], true],
    ]);
  });

  test("a change is placed by its topic's database and its source.table; a table the topic does not carry goes to the DLQ", () => {
    const routed = cdcTopicList(config, split)[2]!;
    const change = (table: string | undefined): CdcChange => ({ kind: 'change', op: 'c', before: null, after: {}, source: { table }, fieldSchemas: {} });
    expect(locationOfChange(routed, change('user_coupon_2'))?.key).toBe('shop_b.user_coupon_2');
    expect(() => locationOfChange(routed, change('user_coupon_0'))).toThrow(CdcInvalidError);
    expect(() => locationOfChange(routed, change(undefined))).toThrow(CdcInvalidError);
    expect(locationOfChange(cdcTopicList(config, split)[0]!, change(undefined))).toBeUndefined();
  });

  test('a database the file names but the configuration does not is refused, with the variable to set', () => {
    expect(() => cdcTopicList(loadConfig({}), split)).toThrow(
      expect.objectContaining({
        message: expect.stringContaining(
          "database 'shop_b' is named by examples/shop/entities-split.json but not configured: add it to TB_DATABASES, with TB_DB_SHOP_B_HOST",
        ),
      }),
    );
  });
});

test('the scanner has a cursor per table of a spread entity, keyed by its location', () => {
  const keys = scanCursorsOf(split).map((c) => [c.key, c.location.key]);
  expect(keys).toEqual(
    expect.arrayContaining([
      ['t_order', 'main.t_order'],
      ['user_coupon@main.user_coupon_0', 'main.user_coupon_0'],
      ['user_coupon@shop_b.user_coupon_3', 'shop_b.user_coupon_3'],
      ['user_coupon.lock_timeout@shop_b.user_coupon_2', 'shop_b.user_coupon_2'],
    ]),
  );
  expect(keys).toHaveLength(1 + 2 * 4);
});

describe('bucket records of a spread entity', () => {
  const topology = parseTopology(testTopologyJson, 'test');
  const entry = { entity: 'user_coupon', transition: 'expired', id: '1152921504606846977', expireAtMs: 10_000, at: 'shop_b.user_coupon_2' };

  test('are read back as written: the shard of its database, its table', () => {
    const record = bucketRecord(topology, split, entry, 5_000);
    expect(Number(record.key) % 2).toBe(1);
    const held = heldRecordReader(topology, split)({ ...record, offset: '0' }, 5_000);
    expect(held).toMatchObject({ shard: Number(record.key), entry });
  });

  test('written before its databases were reordered in the file, are still read (not dead-lettered)', () => {
    const record = bucketRecord(topology, split, entry, 5_000);
    const file = JSON.parse(splitText) as { entities: Array<{ locations?: unknown[] }> };
    file.entities[1]!.locations = [...file.entities[1]!.locations!].reverse();
    const reordered = parseEntityFile(file, 'reordered.json');
    expect(shardOfEntry(entityOf(reordered, 'user_coupon'), entry, 4) % 2).toBe(0); // a new entry's shard moved
    expect(heldRecordReader(topology, reordered)({ ...record, offset: '0' }, 5_000).entry).toEqual(entry);
  });
});

test('the tables of a set must agree on the columns timebucket uses', () => {
  const column = (name: string, columnType: string, nullable = false): ColumnInfo => ({
    name,
    dataType: columnType.replace(/\(.*$/, '').split(' ')[0]!,
    columnType,
    nullable,
    maxChars: null,
    charset: null,
  });
  const table = (faceValue: string) => ({
    name: 't',
    columns: new Map(
      [
        column('id', 'bigint unsigned'),
        column('user_id', 'bigint unsigned'),
        { ...column('status', 'varchar(8)'), maxChars: 8, charset: 'utf8mb4' },
        column('expire_at_ms', 'bigint'),
        column('lock_expire_time', 'datetime(3)', true),
        column('lock_order_no', 'varchar(64)', true),
        column('face_value', faceValue),
      ].map((c) => [c.name, c]),
    ),
    indexes: [
      { name: 'PRIMARY', columns: ['id'], unique: true },
      { name: 'idx_status_expire', columns: ['status', 'expire_at_ms', 'id'], unique: false },
      { name: 'idx_status_lock', columns: ['status', 'lock_expire_time', 'id'], unique: false },
    ],
  });
  const onlyWallet = { ...split, entities: [wallet] };
  const schema = new Map(wallet.locations.map((l, i) => [l.key, table(i === 3 ? 'decimal(12,2)' : 'decimal(10,2)')]));
  expect(entitySchemaProblems(onlyWallet, schema, { main: 'shop', shop_b: 'shop2' })).toEqual([
    'user_coupon (shop2.user_coupon_3): column face_value is decimal(12,2) NOT NULL but decimal(10,2) NOT NULL in shop.user_coupon_0; the tables of a set must agree',
  ]);

  // One set over a MariaDB and a MySQL server (a move from one to the other): the same DDL reads
  // back as `bigint(20) unsigned` from MariaDB and `bigint unsigned` from MySQL 8.0.19 and later,
  // which print no integer display width. A width changes nothing a value can hold.
  const mariadbPrinted = (t: ReturnType<typeof table>) => ({
    ...t,
    columns: new Map([...t.columns].map(([n, c]) => [n, { ...c, columnType: c.columnType.replace(/^(bigint)/, '$1(20)') }])),
  });
  const overBothServers = new Map(
    wallet.locations.map((l) => [l.key, l.database === 'main' ? mariadbPrinted(table('decimal(10,2)')) : table('decimal(10,2)')]),
  );
  expect(overBothServers.get(wallet.locations[0]!.key)!.columns.get('id')!.columnType).toBe('bigint(20) unsigned');
  expect(entitySchemaProblems(onlyWallet, overBothServers, { main: 'shop', shop_b: 'shop2' })).toEqual([]);
  // Still a difference: another integer type, or signedness.
  const int = new Map(
    wallet.locations.map((l) => [
      l.key,
      l.database === 'main'
        ? mariadbPrinted(table('decimal(10,2)'))
        : {
            ...table('decimal(10,2)'),
            columns: new Map(
              [...table('decimal(10,2)').columns].map(([n, c]) => [
                n,
                n === 'user_id' ? column('user_id', 'int unsigned') : n === 'expire_at_ms' ? column('expire_at_ms', 'bigint unsigned') : c,
              ]),
            ),
          },
    ]),
  );
  expect(entitySchemaProblems(onlyWallet, int, { main: 'shop', shop_b: 'shop2' })).toEqual(
    expect.arrayContaining([
      'user_coupon (shop2.user_coupon_2): column user_id is int unsigned NOT NULL but bigint(20) unsigned NOT NULL in shop.user_coupon_0; the tables of a set must agree',
      'user_coupon (shop2.user_coupon_2): column expire_at_ms is bigint unsigned NOT NULL but bigint(20) NOT NULL in shop.user_coupon_0; the tables of a set must agree',
    ]),
  );
});
