import { loadConfig } from '../../../src/config';

test('relay defaults: 2 loops of 2000-row claims, published rows kept a day', () => {
  expect(loadConfig({}).relay).toEqual({ batchSize: 2_000, leaseMs: 30_000, idleMs: 200, concurrency: 2, retentionMs: 86_400_000 });
});

test('TB_RELAY_CONCURRENCY and TB_OUTBOX_RETENTION_MS are read, 0 keeping published rows for ever', () => {
  expect(loadConfig({ TB_RELAY_CONCURRENCY: '3', TB_OUTBOX_RETENTION_MS: '0' }).relay).toMatchObject({ concurrency: 3, retentionMs: 0 });
});

test.each([
  ['TB_RELAY_CONCURRENCY', '0'],
  ['TB_RELAY_CONCURRENCY', '17'],
  ['TB_RELAY_CONCURRENCY', 'two'],
  ['TB_OUTBOX_RETENTION_MS', '-1'],
  ['TB_OUTBOX_RETENTION_MS', '1.5'],
])('%s=%s is refused at start-up', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
});
