/**
 * timebucket_replica_lag_seconds{database}: each replica's lag as the heartbeat measures it
 * (db/replica-heartbeat.ts), read at scrape time; a database whose replica's lag is unknown (not
 * read yet, or the replica not answering) has no sample, so an alert on it is not fooled by a 0.
 * Labels bounded: database (the configured ones with a replica).
 *
 * Registered on the process's registry by whoever starts the heartbeat (main.ts, for the expirer
 * role), once per registry: a second start in the same process reads from the newer source.
 */
import { Gauge, type Registry } from 'prom-client';

export type ReplicaLagSource = () => Readonly<Record<string, number | undefined>>;

const byRegistry = new WeakMap<Registry, { source: ReplicaLagSource }>();

export function trackReplicaLag(registry: Registry, source: ReplicaLagSource): void {
  const known = byRegistry.get(registry);
  if (known !== undefined) {
    known.source = source;
    return;
  }
  const holder = { source };
  byRegistry.set(registry, holder);
  new Gauge({
    name: 'timebucket_replica_lag_seconds',
    help: "Each database's replica behind its primary, by the heartbeat row (TB_DB_REPLICA_*); no sample while unknown (not read yet, or the replica not answering)",
    labelNames: ['database'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [database, ms] of Object.entries(holder.source())) if (ms !== undefined) this.set({ database }, ms / 1000);
    },
  });
}
