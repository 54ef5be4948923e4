/**
 * One capture probe (publish/capture-probe.ts): an ordinary event_outbox row routed to the probe
 * topic, so it reaches Kafka through the same binlog and connector as the events, in order.
 *
 *   INSERT INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload)
 *     VALUES (?, ?, '0', 'OUTBOX_PROBE', 'timebucket.outbox.probe', ?, '', 0x00)
 *
 * Inputs: a database's pool, the probe's unique key, the probe topic, when it was written.
 * Output: none. Each key is written once (a new key per probe); retention purges the rows.
 */
import type { Knex } from 'knex';

const PROBE_EVENT_TYPE = 'OUTBOX_PROBE';

export async function insertOutboxProbe(db: Knex, probe: Readonly<{ key: string; topic: string; writtenAtMs: number }>): Promise<void> {
  await db.raw(
    `INSERT INTO event_outbox (event_key, topic, entity_id, event_type, ce_type, ce_time, ce_dataschema, payload) VALUES (?, ?, '0', ?, 'timebucket.outbox.probe', ?, '', ?)`,
    [probe.key, probe.topic, PROBE_EVENT_TYPE, new Date(probe.writtenAtMs).toISOString(), Buffer.from([0])],
  );
}
