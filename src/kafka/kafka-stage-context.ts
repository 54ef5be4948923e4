/**
 * What a stage over Kafka (the repartitioner, the hold stages) reads of the process: the
 * topology and entities, the Kafka client, the shared producer, the dead-letter writer of its
 * stage, the metrics, the clock and the logger. main.ts hands every role one object holding
 * them all; each role's starter adds what else it reads.
 */
import type { Kafka } from 'kafkajs';
import type { Clock } from '../core/clock';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { Topology } from '../core/topology';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import type { Role } from '../roles';
import type { DlqWriter } from './dlq-writer';
import type { GuardedProducer } from './guarded-producer';

export type KafkaStageContext<R extends Role> = Readonly<{
  topology: Topology;
  catalogue: EntityCatalogue;
  kafka: Pick<Kafka, 'admin' | 'consumer'>;
  /** Bucket records out: routed entries, and misplaced ones routed again. */
  producer: GuardedProducer;
  dlqFor: (stage: R) => DlqWriter;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
}>;
