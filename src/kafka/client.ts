/**
 * The kafkajs client, logging through the service's structured logger, over TLS and SASL when
 * configured (TB_KAFKA_SSL, TB_KAFKA_SASL_*). With TLS the broker's certificate is always
 * verified: against the CA file when one is given, else the system's CAs.
 */
import { Kafka, KafkaConfig, logLevel as KafkaLogLevel, LogEntry, SASLOptions } from 'kafkajs';
import type { Config } from '../config';
import type { Logger } from '../ops/logger';

type Level = 'error' | 'warn' | 'info' | 'debug';

const levels: Record<number, Level> = {
  [KafkaLogLevel.ERROR]: 'error',
  [KafkaLogLevel.WARN]: 'warn',
  [KafkaLogLevel.INFO]: 'info',
  [KafkaLogLevel.DEBUG]: 'debug',
};

/**
 * kafkajs lines whose level says more than they mean, each with why it is expected. A client
 * logs the first of each kind at info, with the reason (`expected`), and its repeats at debug:
 * kafkajs retries these conditions itself, and one that lasts ends in a failure its caller logs
 * (a consumer's crash, a command's error). Every other line keeps kafkajs's level.
 *
 * A Connection line carries only kafkajs's message for the broker's error code, so these are
 * matched on the messages of kafkajs's error table (kafkajs/src/protocol/error.js; the unit
 * test checks them against it).
 */
export const ExpectedKafkaLines = [
  {
    kind: 'coordinator-starting',
    matches: (e: LogEntry) =>
      e.namespace === 'Connection' &&
      [
        // GROUP_LOAD_IN_PROGRESS (14): also a broker's first InitProducerId, while it fetches its first block of producer ids.
        "The coordinator is loading and hence can't process requests for this group",
        // GROUP_COORDINATOR_NOT_AVAILABLE (15): a new cluster creating __consumer_offsets on the first group's request.
        'The group coordinator is not available',
        // NOT_COORDINATOR_FOR_GROUP (16): asked of a broker that no longer or not yet coordinates the group.
        'This is not the correct coordinator for this group',
      ].includes(e.log['error'] as string),
    reason:
      'a coordinator is starting (a new cluster, a broker just started, a coordinator moved): kafkajs finds it again and retries; an expected start-up condition',
  },
  {
    kind: 'idempotent-producer-retries',
    matches: (e: LogEntry) => e.namespace === 'Producer' && e.log.message === 'Limiting retries for the idempotent producer may invalidate EoS guarantees',
    reason:
      "TB_KAFKA_RETRIES bounds the producers' retries on purpose (createKafka); a send that gives up is retried by its stage with a new producer, and a record written twice is harmless",
  },
] as const;

/** The level a kafkajs line is logged at, and why when it is not kafkajs's: `seen` holds the kinds this client logged. */
export function levelOf(entry: LogEntry, seen: Set<string>): { level: Level; expected?: string } {
  const rule = ExpectedKafkaLines.find((r) => r.matches(entry));
  if (rule === undefined) return { level: levels[entry.level] ?? 'info' };
  if (seen.has(rule.kind)) return { level: 'debug', expected: rule.reason };
  seen.add(rule.kind);
  return { level: 'info', expected: rule.reason };
}

export function createKafka(kafka: Config['kafka'], logger: Logger, clientIdSuffix = ''): Kafka {
  const log = logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: `${kafka.clientId}${clientIdSuffix}`,
    brokers: [...kafka.brokers],
    connectionTimeout: 5_000,
    requestTimeout: kafka.requestTimeoutMs,
    // Every request's retries bounded, the idempotent producer's sends included: a send to a
    // broker that stays away fails within a bounded time, and the stage's own retry (with its
    // breaker) takes over, instead of kafkajs retrying it for ever inside one call. kafkajs warns
    // for each such producer that this "may invalidate EoS guarantees": a send it gave up on may
    // still have been written, and its next send on the same sequence would be refused or
    // dropped. Harmless here: the guarded producer (kafka/guarded-producer.ts) never uses a
    // producer again after a failed send (the retry goes out with a new producer id), and a
    // record written twice is harmless downstream (an event is keyed and inserted once, I4; an
    // expiry is a guarded update). So that warning is logged once per client at info, with this
    // reason (ExpectedKafkaLines).
    retry: { retries: kafka.retries, initialRetryTime: 200, maxRetryTime: 5_000 },
    ...securityOf(kafka),
    logLevel: KafkaLogLevel.WARN,
    logCreator: () => {
      const seen = new Set<string>();
      return (entry: LogEntry) => {
        const { message, ...extra } = entry.log;
        const { level, expected } = levelOf(entry, seen);
        log[level]({ namespace: entry.namespace, ...extra, ...(expected !== undefined && { expected }) }, message);
      };
    },
  });
}

/** kafkajs's ssl and sasl options from the validated configuration. */
export function securityOf(kafka: Pick<Config['kafka'], 'ssl' | 'sasl'>): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const ssl: KafkaConfig['ssl'] = kafka.ssl.enabled ? { rejectUnauthorized: true, ...(kafka.ssl.ca !== undefined && { ca: [kafka.ssl.ca] }) } : undefined;
  const sasl: SASLOptions | undefined =
    kafka.sasl === undefined ? undefined : ({ mechanism: kafka.sasl.mechanism, username: kafka.sasl.username, password: kafka.sasl.password } as SASLOptions);
  return { ...(ssl !== undefined && { ssl }), ...(sasl !== undefined && { sasl }) };
}
