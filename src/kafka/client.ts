/** The kafkajs client, logging through the service's structured logger. */
import { Kafka, logLevel as KafkaLogLevel, LogEntry } from 'kafkajs';
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
    logLevel: KafkaLogLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...extra } = entry.log;
      log[levels[entry.level] ?? 'info']({ namespace: entry.namespace, ...extra }, message);
    },
  });
}
