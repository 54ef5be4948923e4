/**
 * The replicas' settings (config-replicas.ts): none by default; TB_DB_REPLICA_* for the main
 * database, TB_DB_<N>_REPLICA_* for another; locally the stack's replica and reader account.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';

test('no replica unless its host or port is set; the heartbeat beats every 250 ms', () => {
  expect(loadConfig({}).replicas).toEqual({ byDatabase: {}, heartbeatIntervalMs: 250 });
});

test("locally, a port alone is the stack's replica, read as the stack's reader account, with the database's schema and TLS", () => {
  const { replicas, db } = loadConfig({ TB_DB_REPLICA_PORT: '13308', TB_DB_TLS: 'on', TB_REPLICA_HEARTBEAT_INTERVAL_MS: '500' });
  expect(replicas.heartbeatIntervalMs).toBe(500);
  expect(replicas.byDatabase['main']).toMatchObject({
    host: '127.0.0.1',
    port: 13308,
    user: 'timebucket_replica_reader',
    database: db.database,
    tls: { enabled: true },
  });
});

test('a database of TB_DATABASES has its own, from TB_DB_<N>_REPLICA_*; its password may come from a file', () => {
  const file = join(tmpdir(), `replica-pw-${process.pid}`);
  writeFileSync(file, 'pw-from-file\n');
  const config = loadConfig({
    TB_DATABASES: 'eu',
    TB_DB_EU_NAME: 'shop_eu',
    TB_DB_EU_REPLICA_HOST: 'eu-replica',
    TB_DB_EU_REPLICA_USER: 'lag_reader',
    TB_DB_EU_REPLICA_PASSWORD_FILE: file,
  });
  expect(Object.keys(config.replicas.byDatabase)).toEqual(['eu']);
  expect(config.replicas.byDatabase['eu']).toMatchObject({
    host: 'eu-replica',
    port: 13308,
    user: 'lag_reader',
    password: 'pw-from-file',
    database: 'shop_eu',
  });
});

test('in production a replica needs its host, user and password; a bad port or account name is named', () => {
  const production = { TB_ENV: 'production', TB_DB_HOST: 'db', TB_DB_USER: 'u', TB_DB_PASSWORD: 'p' };
  expect(() => loadConfig({ ...production, TB_DB_REPLICA_PORT: '3307' }, { uses: ['db'] })).toThrow(
    /TB_DB_REPLICA_HOST: required.*TB_DB_REPLICA_USER: required.*TB_DB_REPLICA_PASSWORD: required/,
  );
  expect(
    loadConfig({ ...production, TB_DB_REPLICA_HOST: 'r', TB_DB_REPLICA_USER: 'x', TB_DB_REPLICA_PASSWORD: 'y' }, { uses: ['db'] }).replicas.byDatabase['main'],
  ).toMatchObject({
    port: 3306,
  });
  expect(() => loadConfig({ TB_DB_REPLICA_PORT: 'x' })).toThrow(/TB_DB_REPLICA_PORT: not a port/);
  expect(() => loadConfig({ TB_DB_REPLICA_PORT: '13308', TB_DB_REPLICA_USER: "a'b" })).toThrow(/TB_DB_REPLICA_USER: letters/);
});
