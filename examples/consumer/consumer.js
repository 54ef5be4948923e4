#!/usr/bin/env node
/**
 * A consumer of timebucket's events, as a subscribing team would write one (docs/asyncapi.yaml):
 *  - decodes each value through the schema registry (Confluent framing: the schema id is in the
 *    first 5 bytes of the value; the registry serves the writer schema);
 *  - reads 64-bit ids exactly, as BigInt (a plain Avro decoder rounds ids beyond 2^53);
 *  - drops duplicates by the `event_key` header (delivery is at least once).
 *
 * Deduplication here is an in-memory window of recent keys, enough to show the idea. A real
 * consumer records event_key in its own database, in the transaction that applies the event,
 * under a unique constraint: then a duplicate is refused exactly when it would do harm.
 *
 *   node examples/consumer/consumer.js            (the local stack's brokers, registry and topics)
 *   TB_KAFKA_BROKERS=… TB_REGISTRY_URL=… TOPIC_PREFIX=timebucket node examples/consumer/consumer.js
 *
 * Over SASL_SSL with SCRAM-SHA-512, and a registry behind basic auth, as production runs them:
 *   KAFKA_SSL_CA_FILE=ca.pem (or KAFKA_SSL=on for a public CA) KAFKA_SASL_USERNAME=… KAFKA_SASL_PASSWORD=… \
 *   REGISTRY_USERNAME=… REGISTRY_PASSWORD=… TB_KAFKA_BROKERS=… TB_REGISTRY_URL=… node examples/consumer/consumer.js
 */
const { readFileSync } = require('node:fs');
const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');
const avro = require('avsc');

/** Avro `long` as BigInt, exact over 64 bits (avsc's default is a JS number, exact to 2^53). */
const exactLong = avro.types.LongType.__with({
  fromBuffer: (buf) => buf.readBigInt64LE(),
  toBuffer: (n) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(n));
    return buf;
  },
  fromJSON: BigInt,
  toJSON: Number,
  isValid: (n) => typeof n === 'bigint',
  compare: (a, b) => (a === b ? 0 : a < b ? -1 : 1),
});

/**
 * avsc typeHook: every plain `long` (ids, version) becomes exactLong; timestamps (a long with a
 * logicalType) stay numbers. A hook, not avsc's `registry` option: avsc adds each named type it
 * parses to that registry, and a second version of a schema would then fail to parse.
 */
function exactLongHook(schema) {
  if (schema === 'long') return exactLong;
  if (schema && typeof schema === 'object' && schema.type === 'long' && schema.logicalType === undefined) return exactLong;
  return undefined;
}

/** The last `size` keys handled, oldest dropped first. */
function recentKeys(size) {
  const keys = new Set();
  return {
    has: (key) => keys.has(key),
    /** Called once the event is handled: a failure before that must not mark it seen. */
    add(key) {
      keys.add(key);
      if (keys.size > size) keys.delete(keys.values().next().value);
    },
  };
}

/**
 * Consumes `topics` from their beginning in group `groupId`; calls onEvent({ topic, key, headers,
 * value }) once per event_key, onDuplicate(eventKey) for the rest. Resolves to a stop function.
 * `ssl` and `sasl` are kafkajs's options (e.g. { ca: [pem] } and { mechanism: 'scram-sha-512',
 * username, password }); `registryAuth` is { username, password } for a registry behind basic auth.
 */
async function startConsumer({ brokers, registryUrl, topics, groupId, onEvent, onDuplicate = () => {}, windowSize = 100000, ssl, sasl, registryAuth }) {
  const registry = new SchemaRegistry({ host: registryUrl, auth: registryAuth }, { [SchemaType.AVRO]: { typeHook: exactLongHook } });
  const seen = recentKeys(windowSize);
  const consumer = new Kafka({ clientId: 'timebucket-example-consumer', brokers, ssl, sasl, logLevel: logLevel.NOTHING }).consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, message }) => {
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
      const eventKey = headers['event_key'];
      if (seen.has(eventKey)) return onDuplicate(eventKey);
      const value = await registry.decode(message.value);
      // Throws to kafkajs on failure: the message is delivered again, and handled then.
      await onEvent({ topic, key: message.key.toString(), headers, value });
      seen.add(eventKey);
    },
  });
  return () => consumer.disconnect();
}

/** One line per event: the entity and its due time; a digest, its user and the coupons it lists. */
function describe(value) {
  const due = (ms) => new Date(Number(ms)).toISOString();
  if (Array.isArray(value.items)) {
    const coupons = value.items.map((i) => `${i.coupon_id} due ${due(i.due_at)}`).join(', ');
    return `user ${value.user_id}: ${value.items.length} coupon(s) expiring soon (${coupons}), via ${value.path}`;
  }
  const id = value.coupon_id ?? value.order_id;
  const before = value.remind_before_ms === undefined ? '' : `, ${Number(value.remind_before_ms) / 60_000} min before`;
  return `${id} (due ${due(value.due_at)}${before}, via ${value.path})`;
}

module.exports = { startConsumer, exactLong, describe };

if (require.main === module) {
  const brokers = (process.env.TB_KAFKA_BROKERS ?? '127.0.0.1:19092').split(',');
  const registryUrl = process.env.TB_REGISTRY_URL ?? 'http://127.0.0.1:18081/apis/ccompat/v7';
  // The local stack's topics (topics/local.json's prefix); production's prefix is timebucket.
  const prefix = process.env.TOPIC_PREFIX ?? 'tblocal';
  const topics = ['coupon-expired', 'order-cancelled', 'coupon-expiring-soon', 'user-coupons-expiring-soon'].map((t) => `${prefix}.events.${t}`);
  const env = process.env;
  startConsumer({
    brokers,
    registryUrl,
    // KAFKA_SSL=on alone trusts the system's CAs; KAFKA_SSL_CA_FILE trusts that CA (and implies TLS).
    ssl: env.KAFKA_SSL_CA_FILE ? { ca: [readFileSync(env.KAFKA_SSL_CA_FILE, 'utf8')] } : env.KAFKA_SSL === 'on' ? true : undefined,
    sasl: env.KAFKA_SASL_USERNAME ? { mechanism: 'scram-sha-512', username: env.KAFKA_SASL_USERNAME, password: env.KAFKA_SASL_PASSWORD } : undefined,
    registryAuth: env.REGISTRY_USERNAME ? { username: env.REGISTRY_USERNAME, password: env.REGISTRY_PASSWORD } : undefined,
    topics: (process.env.TOPICS ?? topics.join(',')).split(','),
    groupId: process.env.GROUP_ID ?? 'timebucket-example-consumer',
    onEvent: ({ headers, value }) => console.log(`${headers['ce_time']} ${headers['event_type']} ${describe(value)}`),
    onDuplicate: (key) => console.log(`duplicate dropped: ${key}`),
  }).then(
    (stop) => ['SIGINT', 'SIGTERM'].forEach((s) => process.once(s, () => stop().then(() => process.exit(0)))),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
