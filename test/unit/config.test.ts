import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, PRODUCTION_REQUIRED } from '../../src/config';
import { ConfigError } from '../../src/core/errors';
import { cdcTopicOf } from '../../src/ingest/cdc-topics';

describe('loadConfig', () => {
  test('defaults point at the local stack', () => {
    const config = loadConfig({});
    expect(config.kafka.brokers).toEqual(['127.0.0.1:19092']);
    expect(config.db).toMatchObject({ host: '127.0.0.1', port: 13306, database: 'timebucket' });
    expect(config.registry.url).toBe('http://127.0.0.1:18081/apis/ccompat/v7');
    expect(cdcTopicOf(config.cdc, 'coupons')).toBe('tbcdc.timebucket.coupons');
  });

  test("the polling relay's variables are refused by name, each with what to do; set empty they are ignored", () => {
    const given = { TB_PUBLISH_MODE: 'relay', TB_RELAY_CONCURRENCY: '2', TB_RELAY_LEASE_MS: '' };
    expect(() => loadConfig(given)).toThrow(ConfigError);
    try {
      loadConfig(given);
    } catch (err) {
      const problems = (err as ConfigError).details['problems'] as string[];
      expect(problems.filter((p) => /no longer read/.test(p)).map((p) => p.split(':')[0])).toEqual(['TB_PUBLISH_MODE', 'TB_RELAY_CONCURRENCY']);
      expect(problems[0]).toMatch(/timebucket connector config --outbox/);
    }
    expect(loadConfig({ TB_RELAY_LEASE_MS: '' }).publish).toEqual({ probeIntervalMs: 5_000, retentionMs: 86_400_000 });
  });

  test('explicit settings win over stack ports', () => {
    const config = loadConfig({ TB_KAFKA_BROKERS: 'a:1, b:2', TB_KAFKA_PORT: '1', TB_DB_PORT: '3307', TB_STACK_DB_PORT: '1' });
    expect(config.kafka.brokers).toEqual(['a:1', 'b:2']);
    expect(config.db.port).toBe(3307);
  });

  test('the result is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.kafka.brokers)).toBe(true);
  });

  test('bad values fail with every problem named', () => {
    let error: unknown;
    try {
      loadConfig({ TB_KAFKA_PORT: 'x', TB_DB_NAME: 'drop table;', TB_LOG_LEVEL: 'loud' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    expect((error as ConfigError).message).toMatch(/TB_KAFKA_PORT/);
    expect((error as ConfigError).message).toMatch(/TB_DB_NAME/);
    expect((error as ConfigError).message).toMatch(/TB_LOG_LEVEL/);
  });

  test('field and cross-field problems are reported together', () => {
    let error: unknown;
    try {
      loadConfig({ TB_KAFKA_BROKERS: 'localhost', TB_SESSION_TIMEOUT_MS: '9000', TB_HEARTBEAT_INTERVAL_MS: '5000', TB_LOG_LEVEL: 'loud' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).details['problems'] as string[];
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^TB_KAFKA_BROKERS: expected host:port/),
        expect.stringMatching(/^TB_LOG_LEVEL: /),
        expect.stringMatching(/^TB_HEARTBEAT_INTERVAL_MS: must be at most a third of TB_SESSION_TIMEOUT_MS/),
      ]),
    );
    expect(problems).toHaveLength(3);
  });

  test('statement deadlines: 15 s over a 10 s row-lock wait by default, migrate 1 h; a deadline at or under the lock wait is refused', () => {
    expect(loadConfig({}).db).toMatchObject({ statementTimeoutMs: 15_000, lockWaitTimeoutS: 10, migrateStatementTimeoutMs: 3_600_000 });
    expect(
      loadConfig({ TB_DATABASES: 'wallet', TB_DB_WALLET_NAME: 'w', TB_DB_STATEMENT_TIMEOUT_MS: '4000', TB_DB_LOCK_WAIT_TIMEOUT_S: '3' }).databases['wallet'],
    ).toMatchObject({ statementTimeoutMs: 4_000, lockWaitTimeoutS: 3 });
    expect(() => loadConfig({ TB_DB_STATEMENT_TIMEOUT_MS: '10000' })).toThrow(/TB_DB_STATEMENT_TIMEOUT_MS: must exceed TB_DB_LOCK_WAIT_TIMEOUT_S/);
    expect(() => loadConfig({ TB_DB_STATEMENT_TIMEOUT_MS: '500' })).toThrow(/TB_DB_STATEMENT_TIMEOUT_MS/);
  });

  test('the heartbeat rule alone is reported too', () => {
    expect(() => loadConfig({ TB_SESSION_TIMEOUT_MS: '9000', TB_HEARTBEAT_INTERVAL_MS: '5000' })).toThrow(/TB_HEARTBEAT_INTERVAL_MS: must be at most a third/);
  });

  test('instance id: host name plus a random suffix by default, never the same twice; overridable', () => {
    const a = loadConfig({}).instanceId;
    const b = loadConfig({}).instanceId;
    expect(a).toMatch(/^[A-Za-z0-9._-]+-[0-9a-f]{6}$/);
    expect(a).not.toBe(b);
    expect(loadConfig({ TB_INSTANCE_ID: 'pod-7' }).instanceId).toBe('pod-7');
    expect(() => loadConfig({ TB_INSTANCE_ID: 'has space' })).toThrow(/TB_INSTANCE_ID/);
  });

  test('a malformed broker list is rejected', () => {
    expect(() => loadConfig({ TB_KAFKA_BROKERS: 'localhost' })).toThrow(/TB_KAFKA_BROKERS/);
  });

  describe('TB_ENV=production: no local-stack defaults', () => {
    const complete = {
      TB_ENV: 'production',
      TB_KAFKA_BROKERS: 'kafka-0:9092',
      TB_DB_HOST: 'db',
      TB_DB_USER: 'app',
      TB_DB_PASSWORD: 'pw',
      TB_REGISTRY_URL: 'http://registry:8081',
      TB_TOPOLOGY: '/etc/timebucket/topology.json',
      TB_ENTITIES: '/etc/timebucket/entities.json',
    };

    test('every missing connection setting is listed, in one error', () => {
      let error: unknown;
      try {
        loadConfig({ TB_ENV: 'production' });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).details['problems'] as string[];
      expect(problems).toEqual(PRODUCTION_REQUIRED.map((name) => `${name}: required when TB_ENV=production (no local-stack default)`));
    });

    test("given all of them, it starts, with MySQL's port unless told", () => {
      const config = loadConfig(complete);
      expect(config.db).toMatchObject({ host: 'db', port: 3306, user: 'app' });
      expect(loadConfig({ ...complete, TB_DB_PORT: '3307' }).db.port).toBe(3307);
      expect(() => loadConfig({ ...complete, TB_ENV: 'staging' })).toThrow(/TB_ENV/);
    });
  });

  describe('secrets from files (VAR_FILE)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-config-'));
    const file = (name: string, content: string) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    };

    test("the file's content, without its trailing newline, is the value", () => {
      const config = loadConfig({ TB_DB_PASSWORD_FILE: file('pw', 's3cret\n'), TB_DB_USER_FILE: file('user', 'app') });
      expect(config.db).toMatchObject({ user: 'app', password: 's3cret' });
    });

    test('an unreadable file, or the variable given twice, is a configuration error that never shows the secret', () => {
      let error: unknown;
      try {
        loadConfig({ TB_DB_PASSWORD_FILE: join(dir, 'missing'), TB_DB_USER: 'app', TB_DB_USER_FILE: file('user2', 'other-secret') });
      } catch (err) {
        error = err;
      }
      const problems = (error as ConfigError).details['problems'] as string[];
      expect(problems).toEqual([
        expect.stringMatching(/^TB_DB_USER_FILE: TB_DB_USER is set too/),
        `TB_DB_PASSWORD_FILE: cannot read ${join(dir, 'missing')} (ENOENT)`,
      ]);
      expect(JSON.stringify(problems)).not.toMatch(/other-secret/);
    });
  });

  describe('TLS to the database', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-tls-'));
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

    test('off unless asked; on, verified against the system CAs or the given CA file', () => {
      expect(loadConfig({}).db.tls).toEqual({ enabled: false });
      expect(loadConfig({ TB_DB_TLS: 'on' }).db.tls).toEqual({ enabled: true, ca: undefined });
      expect(loadConfig({ TB_DB_TLS: 'on', TB_DB_TLS_CA_FILE: ca }).db.tls).toEqual({ enabled: true, ca: readFileSync(ca, 'utf8') });
    });

    test('a CA file without TLS on, or one that cannot be read, is a configuration error', () => {
      expect(() => loadConfig({ TB_DB_TLS_CA_FILE: ca })).toThrow(/TB_DB_TLS_CA_FILE: set TB_DB_TLS=on too/);
      expect(() => loadConfig({ TB_DB_TLS: 'on', TB_DB_TLS_CA_FILE: join(dir, 'missing.pem') })).toThrow(/TB_DB_TLS_CA_FILE: cannot read/);
      expect(() => loadConfig({ TB_DB_TLS: 'yes' })).toThrow(/TB_DB_TLS/);
    });
  });
  describe('Kafka over TLS and SASL', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-kafka-tls-'));
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const pwFile = join(dir, 'kafka-pw');
    writeFileSync(pwFile, 'k-secret\n');

    test('plaintext unless asked; TLS with a CA file; SCRAM with the password from a file', () => {
      expect(loadConfig({}).kafka).toMatchObject({ ssl: { enabled: false }, sasl: undefined });
      const config = loadConfig({
        TB_KAFKA_SSL: 'on',
        TB_KAFKA_SSL_CA_FILE: ca,
        TB_KAFKA_SASL_MECHANISM: 'scram-sha-512',
        TB_KAFKA_SASL_USERNAME: 'svc',
        TB_KAFKA_SASL_PASSWORD_FILE: pwFile,
      });
      expect(config.kafka.ssl).toEqual({ enabled: true, ca: readFileSync(ca, 'utf8') });
      expect(config.kafka.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'svc', password: 'k-secret' });
    });

    test('a mechanism without credentials, credentials without a mechanism, PLAIN without TLS, a CA without TLS: each listed', () => {
      const problemsOf = (env: Record<string, string>) => {
        try {
          loadConfig(env);
        } catch (err) {
          return (err as ConfigError).details['problems'] as string[];
        }
        return [];
      };
      expect(problemsOf({ TB_KAFKA_SASL_MECHANISM: 'scram-sha-256' })).toEqual([
        expect.stringMatching(/^TB_KAFKA_SASL_USERNAME: required with TB_KAFKA_SASL_MECHANISM/),
        expect.stringMatching(/^TB_KAFKA_SASL_PASSWORD: required with TB_KAFKA_SASL_MECHANISM/),
      ]);
      expect(problemsOf({ TB_KAFKA_SASL_USERNAME: 'svc', TB_KAFKA_SASL_PASSWORD: 'p' })).toEqual([
        expect.stringMatching(/^TB_KAFKA_SASL_USERNAME: set TB_KAFKA_SASL_MECHANISM too/),
        expect.stringMatching(/^TB_KAFKA_SASL_PASSWORD: set TB_KAFKA_SASL_MECHANISM too/),
      ]);
      expect(problemsOf({ TB_KAFKA_SASL_MECHANISM: 'plain', TB_KAFKA_SASL_USERNAME: 'svc', TB_KAFKA_SASL_PASSWORD: 'p' })).toEqual([
        expect.stringMatching(/^TB_KAFKA_SASL_MECHANISM: plain sends the password in clear/),
      ]);
      expect(problemsOf({ TB_KAFKA_SSL_CA_FILE: ca })).toEqual([expect.stringMatching(/^TB_KAFKA_SSL_CA_FILE: set TB_KAFKA_SSL=on too/)]);
      expect(problemsOf({ TB_KAFKA_SASL_MECHANISM: 'gssapi', TB_KAFKA_SASL_USERNAME: 'svc', TB_KAFKA_SASL_PASSWORD: 'p' })).toEqual([
        expect.stringMatching(/^TB_KAFKA_SASL_MECHANISM: /),
      ]);
    });
  });

  describe('registry basic auth', () => {
    test('credentials in the URL move to auth, and the URL keeps none', () => {
      const config = loadConfig({ TB_REGISTRY_URL: 'https://svc:p%40ss@registry.example:8081/apis/ccompat/v7/' });
      expect(config.registry).toEqual({ url: 'https://registry.example:8081/apis/ccompat/v7', auth: { username: 'svc', password: 'p@ss' } });
    });

    test('or from TB_REGISTRY_USERNAME and TB_REGISTRY_PASSWORD; without either, no auth', () => {
      expect(loadConfig({ TB_REGISTRY_USERNAME: 'svc', TB_REGISTRY_PASSWORD: 'pw' }).registry.auth).toEqual({ username: 'svc', password: 'pw' });
      expect(loadConfig({}).registry.auth).toBeUndefined();
    });

    test('both ways at once, or a user name without a password, is a configuration error', () => {
      expect(() => loadConfig({ TB_REGISTRY_URL: 'https://a:b@registry.example', TB_REGISTRY_USERNAME: 'svc', TB_REGISTRY_PASSWORD: 'pw' })).toThrow(
        /TB_REGISTRY_USERNAME: the registry URL carries credentials too/,
      );
      expect(() => loadConfig({ TB_REGISTRY_USERNAME: 'svc' })).toThrow(/TB_REGISTRY_PASSWORD: required with TB_REGISTRY_USERNAME/);
      // A bare % in the password: a configuration error (exit 78) that does not repeat it.
      expect(() => loadConfig({ TB_REGISTRY_URL: 'https://u:50%off@registry.example/x' })).toThrow(
        /^invalid configuration: TB_REGISTRY_URL: its user info is not valid percent-encoding/,
      );
      expect(() => loadConfig({ TB_REGISTRY_URL: 'https://u:50%off@registry.example/x' })).not.toThrow(/50%off/);
    });
  });

  describe('more databases (TB_DATABASES)', () => {
    test("each is configured by its own variables; name, user and password default to the main database's", () => {
      const config = loadConfig({
        TB_DATABASES: 'shop_b, wallet',
        TB_DB_SHOP_B_HOST: 'b.db',
        TB_DB_SHOP_B_PORT: '3310',
        TB_DB_WALLET_NAME: 'w',
        TB_DB_WALLET_USER: 'wu',
        TB_DB_PASSWORD: 'pw',
      });
      expect(Object.keys(config.databases)).toEqual(['main', 'shop_b', 'wallet']);
      expect(config.databases['main']).toMatchObject({ ...config.db, cdcTopicPrefix: 'tbcdc' });
      expect(config.databases['shop_b']).toMatchObject({
        host: 'b.db',
        port: 3310,
        database: 'timebucket',
        user: 'timebucket',
        password: 'pw',
        cdcTopicPrefix: 'tbcdc_shop_b',
      });
      // Locally the port defaults to the stack's second server.
      expect(config.databases['wallet']).toMatchObject({ host: '127.0.0.1', port: 13307, database: 'w', user: 'wu', poolMax: config.db.poolMax });
    });

    test('a secret of another database may come from a file', () => {
      const dir = mkdtempSync(join(tmpdir(), 'tb-config-'));
      writeFileSync(join(dir, 'pw'), 'b-secret\n');
      expect(loadConfig({ TB_DATABASES: 'shop_b', TB_DB_SHOP_B_PASSWORD_FILE: join(dir, 'pw') }).databases['shop_b']!.password).toBe('b-secret');
    });

    test('production requires each host; bad names and ports are named', () => {
      const production = {
        TB_ENV: 'production',
        TB_KAFKA_BROKERS: 'k:9092',
        TB_DB_HOST: 'db',
        TB_DB_USER: 'app',
        TB_DB_PASSWORD: 'pw',
        TB_REGISTRY_URL: 'http://r:8081',
        TB_TOPOLOGY: 't.json',
        TB_ENTITIES: 'e.json',
      };
      expect(loadConfig({ ...production, TB_DATABASES: 'shop_b', TB_DB_SHOP_B_HOST: 'b' }).databases['shop_b']).toMatchObject({ host: 'b', port: 3306 });
      expect(() => loadConfig({ ...production, TB_DATABASES: 'shop_b' })).toThrow(/TB_DB_SHOP_B_HOST: required when TB_ENV=production for database shop_b/);
      expect(() => loadConfig({ TB_DATABASES: 'main' })).toThrow(/TB_DATABASES: names of lower-case letters/);
      expect(() => loadConfig({ TB_DATABASES: 'Shop' })).toThrow(/TB_DATABASES/);
      expect(() => loadConfig({ TB_DATABASES: 'shop_b', TB_DB_SHOP_B_PORT: 'x' })).toThrow(/TB_DB_SHOP_B_PORT: not a port/);
    });
  });
});
