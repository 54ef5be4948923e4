/** A kafkajs Producer stand-in that records sendBatch calls; each call's result is up to the test. */
import type { Producer, ProducerBatch, RecordMetadata } from 'kafkajs';

export type FakeProducer = {
  producer: Producer;
  calls: ProducerBatch[];
  /** Decides each call's result; defaults to success. */
  respond: (call: ProducerBatch, index: number) => Promise<RecordMetadata[]>;
};

export function fakeProducer(): FakeProducer {
  const fake: FakeProducer = {
    calls: [],
    respond: () => Promise.resolve([]),
    producer: undefined as unknown as Producer,
  };
  const sendBatch = (batch: ProducerBatch): Promise<RecordMetadata[]> => {
    fake.calls.push(batch);
    return fake.respond(batch, fake.calls.length - 1);
  };
  fake.producer = { sendBatch } as unknown as Producer;
  return fake;
}
