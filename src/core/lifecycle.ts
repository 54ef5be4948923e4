/**
 * The lifecycle every long-running part reports (hold consumers, the repartitioner, the relay,
 * the polling loops of ops/poll-loop.ts):
 *
 *   NEW → RUNNING → STOPPING → STOPPED
 *           └────→ FAILED      it can no longer do its work (e.g. its Kafka consumer crashed and
 *                              will not restart); the process reports unhealthy and exits non-zero
 */
export type Lifecycle = 'NEW' | 'RUNNING' | 'STOPPING' | 'STOPPED' | 'FAILED';
