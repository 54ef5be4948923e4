/**
 * The kafkajs client, logging through the service's structured logger, over TLS and SASL when
 * configured (TB_KAFKA_SSL, TB_KAFKA_SASL_*). With TLS the broker's certificate is always
 * verified: against the CA file when one is given, else the system's CAs.
 */
import { Kafka, KafkaConfig, logLevel as KafkaLogLevel, LogEntry, SASLOptions } from 'kafkajs';
import type { Config } from '../config';
import type { Logger } from '../ops/logger';

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [KafkaLogLevel.ERROR]: 'error',
  [KafkaLogLevel.WARN]: 'warn',
  [KafkaLogLevel.INFO]: 'info',
  [KafkaLogLevel.DEBUG]: 'debug',
};

export function createKafka(kafka: Config['kafka'], logger: Logger, clientIdSuffix = ''): Kafka {
  const log = logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: `${kafka.clientId}${clientIdSuffix}`,
    brokers: [...kafka.brokers],
    connectionTimeout: 5_000,
    requestTimeout: kafka.requestTimeoutMs,
    retry: { retries: kafka.retries, initialRetryTime: 200, maxRetryTime: 5_000 },
    ...securityOf(kafka),
    logLevel: KafkaLogLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...extra } = entry.log;
      log[levels[entry.level] ?? 'info']({ namespace: entry.namespace, ...extra }, message);
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
