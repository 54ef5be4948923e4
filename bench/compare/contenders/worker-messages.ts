/** The IPC messages between the harness and its forked workers (raw, poller). */
import type { WrittenRows } from '../workload';

/** Harness → raw worker: rows just written, to transition when due. */
export type RowsMessage = Readonly<{ type: 'rows'; rows: WrittenRows }>;

/** Worker → harness. */
export type WorkerMessage = Readonly<{ type: 'ready' }> | Readonly<{ type: 'progress'; transitioned: number }>;

/** Resolves on the worker's 'ready'; counts its 'progress' messages into `onProgress`. */
export function followWorker(child: NodeJS.EventEmitter, onProgress: (transitioned: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    child.on('message', (m: WorkerMessage) => {
      if (m.type === 'ready') resolve();
      else onProgress(m.transitioned);
    });
    child.once('exit', (code) => reject(new Error(`worker exited before it was ready (code ${code})`)));
  });
}
