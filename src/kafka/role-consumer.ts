/** The consumer of a role's group, with the process's liveness settings (TB_CONSUMER_*). */
import type { Consumer, Kafka } from 'kafkajs';
import type { Config } from '../config';
import { groupIdOf, type Role } from '../roles';

/**
 * How long a fetch waits at the broker when there is nothing new (a record arriving ends it at
 * once), and how long kafkajs sleeps before looking again when every partition is paused. The
 * expirer pauses at an undue head and resumes it on time, so it looks again within 250 ms. The
 * cascader re-routes entries a tier's lead (minutes) ahead of their bucket: a second is nothing
 * there, and an idle cascader reading some seventy ring partitions otherwise sends four empty
 * fetches a second all day long (the profile of a hot minute showed them as its whole cost).
 */
const MAX_WAIT_MS: Readonly<Record<Role, number>> = { repartitioner: 250, expirer: 250, cascader: 1_000, 'outbox-keeper': 1_000, scanner: 1_000 };

export function roleConsumer(kafka: Pick<Kafka, 'consumer'>, config: Pick<Config, 'groupPrefix' | 'consumer'>, role: Role): Consumer {
  return kafka.consumer({
    groupId: groupIdOf(config.groupPrefix, role),
    sessionTimeout: config.consumer.sessionTimeoutMs,
    heartbeatInterval: config.consumer.heartbeatIntervalMs,
    maxWaitTimeInMs: MAX_WAIT_MS[role],
  });
}
