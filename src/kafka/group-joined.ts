import type { Consumer } from 'kafkajs';

/**
 * Resolves when the consumer has first joined its group (and so owns partitions, if any are
 * left for it). Subscribe before `consumer.run()`. Readiness means "joined", not "caught up".
 */
export function groupJoined(consumer: Consumer): Promise<void> {
  return new Promise((resolve) => {
    const remove = consumer.on(consumer.events.GROUP_JOIN, () => {
      remove();
      resolve();
    });
  });
}
