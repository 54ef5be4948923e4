/** The consumer of a role's group, with the process's liveness settings (TB_CONSUMER_*). */
import type { Consumer, Kafka } from 'kafkajs';
import type { Config } from '../config';
import { groupIdOf, type Role } from '../roles';

export function roleConsumer(kafka: Pick<Kafka, 'consumer'>, config: Pick<Config, 'groupPrefix' | 'consumer'>, role: Role): Consumer {
  return kafka.consumer({
    groupId: groupIdOf(config.groupPrefix, role),
    sessionTimeout: config.consumer.sessionTimeoutMs,
    heartbeatInterval: config.consumer.heartbeatIntervalMs,
    maxWaitTimeInMs: 250,
  });
}
