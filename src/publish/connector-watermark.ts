/**
 * What the outbox connector has published, from the offsets Kafka Connect has committed for it:
 * the watermark event_outbox retention goes by (outbox-retention.ts).
 *
 * Why the committed offset and not the capture probe: Connect's producer sends to each partition
 * on its own (acks=all, retried without a deadline), so a probe on its topic can be acknowledged
 * while an earlier event's partition still refuses it (no leader, too few in-sync replicas, a
 * record the topic will not take). A probe seen proves the connector *read* past a row, not that
 * the row's event was written. Connect commits, per source partition, only the offset of the last
 * record that it and every record before it were acknowledged (SubmittedRecords), every
 * offset.flush.interval.ms; Debezium's binlog connectors have one source partition,
 * {"server": <topic.prefix>}. So every record before the committed one is on the wire.
 *
 * Debezium's offset (debezium-connector-binlog BinlogOffsetContext) carries `ts_sec`: the binlog
 * time of the committed record's event, in whole seconds of the database server's clock. On
 * MariaDB and on MySQL without GTIDs that is the statement's start (which is also the NOW(3) of
 * the rows it wrote); on MySQL with GTIDs, the transaction's original commit timestamp. Either is
 * at or before the commit of that record's transaction, and the binlog is in commit order: a row
 * written before ts_sec − (the longest transaction) committed before that record, so its event
 * is on the wire. The caller subtracts that margin (start-outbox-keeper.ts).
 *
 * Nothing is confirmed while the committed offset is a snapshot's (`snapshot` set: its records
 * come in table order, stamped with the snapshot's time), while no offset is committed, or while
 * Connect does not answer. Every connector of the cluster writing under the database's outbox
 * topic.prefix counts, the lowest watermark wins: a connector created again under a new name
 * (docs/operations.md) holds retention until its snapshot is done and the old one is deleted.
 *
 * Reads: GET <connect>/connectors?expand=info, then GET <connect>/connectors/<name>/offsets of
 * each (KIP-875, Connect 3.5 and later), with a deadline each. Never throws.
 */
export type PublishedWatermark = Readonly<{ before: Date }> | Readonly<{ waiting: string }>;

export type ConnectorWatermarkOptions = Readonly<{
  /** Connect's REST API; credentials in it (https://user:pass@host) are sent as basic auth. */
  connectUrl: string;
  /** The outbox connector's topic.prefix (outbox-connector-config.ts outboxTopicPrefix). */
  topicPrefix: string;
  /** Subtracted from the committed event's time: the longest transaction that writes event_outbox. */
  marginMs: number;
  timeoutMs?: number;
}>;

const TIMEOUT_MS = 10_000;

/** A reader of the watermark: each call asks Connect again. */
export function connectorWatermark(opts: ConnectorWatermarkOptions): () => Promise<PublishedWatermark> {
  const { base, headers } = splitCredentials(opts.connectUrl);
  const get = async (path: string): Promise<unknown> => {
    const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(opts.timeoutMs ?? TIMEOUT_MS) });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res.json();
  };
  return async () => {
    try {
      const names = publishingConnectors(await get('/connectors?expand=info'), opts.topicPrefix);
      if (names.length === 0) return { waiting: `no connector on ${base} writes under topic.prefix ${opts.topicPrefix}` };
      let lowest: number | undefined;
      for (const name of names) {
        const committed = committedEventTime(await get(`/connectors/${encodeURIComponent(name)}/offsets`), opts.topicPrefix);
        if ('waiting' in committed) return { waiting: `connector ${name}: ${committed.waiting}` };
        lowest = Math.min(lowest ?? Infinity, committed.atMs);
      }
      return { before: new Date(lowest! - opts.marginMs) };
    } catch (err) {
      return { waiting: `Kafka Connect does not answer (${err instanceof Error ? err.message : String(err)})` };
    }
  };
}

/** The source connectors in GET /connectors?expand=info whose topic.prefix is `topicPrefix`. */
export function publishingConnectors(expanded: unknown, topicPrefix: string): string[] {
  if (typeof expanded !== 'object' || expanded === null) return [];
  return Object.entries(expanded as Record<string, { info?: { type?: string; config?: Record<string, string> } }>)
    .filter(([, c]) => c.info?.type === 'source' && c.info.config?.['topic.prefix'] === topicPrefix)
    .map(([name]) => name);
}

/**
 * The time (epoch ms) of the event a connector's committed offset stands at, from GET
 * /connectors/<name>/offsets ({"offsets":[{"partition":{"server":…},"offset":{…}}]}), or why
 * there is none that confirms anything.
 */
export function committedEventTime(body: unknown, topicPrefix: string): { atMs: number } | { waiting: string } {
  const offsets = (body as { offsets?: unknown } | null)?.offsets;
  if (!Array.isArray(offsets)) return { waiting: 'no offsets in its answer' };
  const ours = (offsets as Array<{ partition?: Record<string, unknown>; offset?: Record<string, unknown> }>).find(
    (o) => o.partition?.['server'] === topicPrefix,
  );
  const offset = ours?.offset;
  if (offset === undefined) return { waiting: 'no offset committed yet' };
  const snapshot = offset['snapshot'];
  if (snapshot !== undefined && snapshot !== false && snapshot !== 'false') return { waiting: `its snapshot (${String(snapshot)}) is not done` };
  const tsSec = offset['ts_sec'];
  if (typeof tsSec !== 'number' || !Number.isFinite(tsSec)) return { waiting: 'its committed offset has no ts_sec' };
  return { atMs: tsSec * 1000 };
}

/** fetch() refuses a URL with credentials: they become an Authorization header. */
function splitCredentials(url: string): { base: string; headers: Record<string, string> } {
  const u = new URL(url);
  const headers: Record<string, string> = {};
  if (u.username !== '' || u.password !== '') {
    headers['Authorization'] = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
    u.username = '';
    u.password = '';
  }
  return { base: u.toString().replace(/\/+$/, ''), headers };
}
