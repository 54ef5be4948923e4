/**
 * Reads the stream's event topics back, as a subscriber would: each distinct event_key header
 * counts once (delivery is at least once), and the newest record timestamp (set by Connect's
 * producer when it sent the event) says when the last event was on the topic. Costs the database
 * nothing, which is why the stream's progress is followed here.
 *
 * Only events of the run's own rows count: the run's topics could also hold events of anything
 * else writing to the captured database with the run's topology.
 */
import type { Consumer, Kafka } from 'kafkajs';
import type { Entity } from '../workload';
import type { EventsSeen } from '../contender';

// eventKeyOf (core/entity-catalogue.ts): <entity>-<transition>-<id>-<due ms>-<occurred ms>.
const KEY = /^(coupon|order)-(?:expired|cancelled)-(\d+)-\d+-\d+$/;

export type EventFollower = Readonly<{
  /** The run's rows, told as they are written (before any event of theirs). */
  sawRows: (entity: Entity, firstId: number, count: number) => void;
  seen: () => EventsSeen;
  stop: () => Promise<void>;
}>;

export async function followEvents(kafka: Kafka, groupId: string, topics: readonly string[]): Promise<EventFollower> {
  const ids: Record<Entity, IdRanges> = { coupon: new IdRanges(), order: new IdRanges() };
  const keys = new Set<string>();
  // Events of rows the run did not write: something else is using the captured database.
  const foreign = new Set<string>();
  let lastTimestampMs: number | null = null;
  let records = 0;
  let crashed: string | undefined;
  const consumer: Consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 250 });
  consumer.on(consumer.events.CRASH, (e) => {
    if (e.payload.restart !== true) crashed = String(e.payload.error);
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [...topics], fromBeginning: true });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.run({
    eachBatch: async ({ batch }) => {
      records += batch.messages.length;
      for (const m of batch.messages) {
        const key = m.headers?.['event_key']?.toString();
        const match = key === undefined ? null : KEY.exec(key);
        if (match === null) continue;
        if (!ids[match[1] as Entity].has(Number(match[2]))) {
          foreign.add(key!);
          continue;
        }
        if (keys.has(key!)) continue;
        keys.add(key!);
        lastTimestampMs = Math.max(lastTimestampMs ?? 0, Number(m.timestamp));
      }
    },
  });
  await joined;
  return {
    sawRows: (entity, firstId, count) => ids[entity].add(firstId, firstId + count - 1),
    seen: () => ({ count: keys.size, lastTimestampMs, foreign: foreign.size, records, ...(crashed !== undefined && { crashed }) }),
    stop: () => consumer.disconnect(),
  };
}

/** Disjoint id ranges [lo, hi], kept in order (they arrive in order: ids only grow): membership by binary search. */
class IdRanges {
  private readonly ranges: Array<readonly [number, number]> = [];

  add(lo: number, hi: number): void {
    const last = this.ranges[this.ranges.length - 1];
    this.ranges.push([lo, hi]);
    if (last !== undefined && lo < last[0]) this.ranges.sort((x, y) => x[0] - y[0]);
  }

  has(id: number): boolean {
    let [a, b] = [0, this.ranges.length - 1];
    while (a <= b) {
      const m = (a + b) >> 1;
      const [lo, hi] = this.ranges[m]!;
      if (id < lo) b = m - 1;
      else if (id > hi) a = m + 1;
      else return true;
    }
    return false;
  }
}
