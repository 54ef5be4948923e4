import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEntityFile } from '../../../src/core/entity-file';
import { connectorConfig } from '../../../src/ingest/connector-config';
import { connectorProblems, ConnectorView } from '../../../src/ingest/connector-check';

const catalogue = parseEntityFile(readFileSync(join(__dirname, '../../../entities/default.json'), 'utf8'), 'entities/default.json');
const wanted = connectorConfig(catalogue, {
  name: 'timebucket-cdc',
  flavour: 'mariadb',
  db: { host: 'h', port: 3306, database: 'shop', user: 'u', password: 'p', tls: false },
  topicPrefix: 'tbcdc',
  serverId: 1,
  history: { kind: 'file', path: '/h' },
  topics: { partitions: 4, replicationFactor: 1, retentionMs: 1 },
}).config;
const running = (name: string, config: Record<string, string>): ConnectorView => ({ name, config, state: 'RUNNING', taskStates: ['RUNNING'] });

test('the generated connector, running, satisfies the check', () => {
  expect(connectorProblems(wanted, [running('timebucket-cdc', { ...wanted })], 'shop')).toEqual([]);
});

test('a hand-written connector with an unescaped table regex and the same filter satisfies it too', () => {
  expect(connectorProblems(wanted, [running('legacy', { ...wanted, 'table.include.list': 'shop.coupons,shop.orders' })], 'shop')).toEqual([]);
});

test('a table nobody captures, a stopped task, a missing filter and a missing from-state are each named', () => {
  const problems = connectorProblems(
    wanted,
    [
      {
        ...running('half', { ...wanted, 'table.include.list': 'shop\\.coupons', 'predicates.notExpirable.expirable.table.coupons.states': 'INIT' }),
        taskStates: ['FAILED'],
      },
    ],
    'shop',
  );
  expect(problems).toEqual([
    'connector half captures shop.coupons but is RUNNING with tasks [FAILED]: look at its status (GET /connectors/half/status)',
    'connector half drops changes of coupons into "ACTIVE": those rows would wait for the scanner; register the output of `timebucket connector config` (PUT /connectors/<name>/config with --config-only)',
    'no connector captures shop.orders under topic.prefix tbcdc: register the output of `timebucket connector config` (PUT /connectors/<name>/config with --config-only)',
  ]);
  const unfiltered = { ...wanted };
  delete unfiltered['transforms.onlyExpirable.predicate'];
  expect(connectorProblems(wanted, [running('plain', unfiltered)], 'shop')[0]).toMatch(/^connector plain has no expirable-change filter for coupons/);
});

describe('a table set over two databases', () => {
  const split = parseEntityFile(readFileSync(join(__dirname, '../../../examples/shop/entities-split.json'), 'utf8'), 'entities-split.json');
  const onB = connectorConfig(split, {
    name: 'timebucket-cdc-shop_b',
    database: 'shop_b',
    flavour: 'mariadb',
    db: { host: 'b', port: 3306, database: 'shop', user: 'u', password: 'p', tls: false },
    topicPrefix: 'cdcb',
    serverId: 2,
    history: { kind: 'file', path: '/h' },
    topics: { partitions: 4, replicationFactor: 1, retentionMs: 1 },
  }).config;

  test("its connector, running, satisfies the check; the other database's, capturing same-named tables under its own prefix, does not stand in for it", () => {
    expect(connectorProblems(onB, [running('b', { ...onB })], 'shop')).toEqual([]);
    const problems = connectorProblems(onB, [running('a', { ...onB, 'topic.prefix': 'cdca' })], 'shop');
    expect(problems).toEqual([
      expect.stringMatching(/^no connector captures shop\.user_coupon_2 under topic\.prefix cdcb; a \(topic\.prefix cdca\) write elsewhere/),
      expect.stringMatching(/user_coupon_3/),
    ]);
  });

  test('a connector without the router writes per-table topics nothing reads: named', () => {
    const unrouted = Object.fromEntries(Object.entries(onB).filter(([k]) => !k.startsWith('transforms.route_')));
    expect(connectorProblems(onB, [running('b', { ...unrouted, transforms: 'onlyExpirable' })], 'shop')).toEqual([
      expect.stringMatching(/^connector b does not route shop\.user_coupon_2 into cdcb\.shop\.user_coupon/),
      expect.stringMatching(/^connector b does not route shop\.user_coupon_3 into cdcb\.shop\.user_coupon/),
    ]);
  });
});
