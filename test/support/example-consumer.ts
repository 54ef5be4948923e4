/**
 * examples/consumer/consumer.js for the tests: plain JavaScript, loaded exactly as a consuming
 * team runs it, with the types of its options (consumer.js documents them).
 */
export type ExampleEvent = { topic: string; key: string; headers: Record<string, string>; value: Record<string, unknown> };

export type ExampleConsumerOptions = {
  brokers: string[];
  registryUrl: string;
  topics: string[];
  groupId: string;
  onEvent: (e: ExampleEvent) => void;
  onDuplicate?: (eventKey: string) => void;
  /** kafkajs's ssl and sasl options; basic auth to the registry. */
  ssl?: { ca: string[] } | true;
  sasl?: { mechanism: 'scram-sha-512'; username: string; password: string };
  registryAuth?: { username: string; password: string };
};

// eslint-disable-next-line @typescript-eslint/no-require-imports
export const { startConsumer } = require('../../examples/consumer/consumer.js') as {
  startConsumer: (o: ExampleConsumerOptions) => Promise<() => Promise<void>>;
};
