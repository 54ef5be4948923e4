/**
 * The foreground (lib/foreground.ts) in a process of its own, as the application is: its
 * latencies then measure the database and the machine, not the bench harness's event loop (which
 * also follows every event the stream publishes, samples CPU and watches the replica: run there,
 * the foreground's requests waited behind that work and counted it as the database's).
 *
 * The same calls as Foreground, over IPC: the child (foreground-child.ts) runs one Foreground on
 * the run's database (TB_DB_NAME) and answers each request in order.
 */
import { join } from 'node:path';
import { forkWorker, type Child } from './children';
import type { ForegroundOptions, PhaseReport } from './foreground';

type Request =
  | Readonly<{ type: 'seed'; perUser: number }>
  | Readonly<{ type: 'start'; phase: string }>
  | Readonly<{ type: 'phase'; name: string }>
  | Readonly<{ type: 'stop' }>;
export type ForegroundRequest = Request & Readonly<{ id: number }>;
export type ForegroundReply = Readonly<{ id: number; error?: string; reports?: PhaseReport[] }>;

export type ForegroundProcessOptions = Omit<ForegroundOptions, 'db' | 'random'> & Readonly<{ dbName: string; logFile: string }>;

export class ForegroundProcess {
  private readonly child: Child;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (r: ForegroundReply) => void; reject: (e: Error) => void }>();

  constructor(opts: ForegroundProcessOptions) {
    const { dbName, logFile, ...rest } = opts;
    this.child = forkWorker(
      'foreground',
      join(__dirname, 'foreground-child.js'),
      { ...process.env, TB_DB_NAME: dbName, FOREGROUND_OPTIONS: JSON.stringify(rest) },
      logFile,
    );
    this.child.process.on('message', (reply: ForegroundReply) => {
      const w = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.error !== undefined) w?.reject(new Error(`foreground: ${reply.error}`));
      else w?.resolve(reply);
    });
    this.child.process.once('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`the foreground process exited (code ${code})`));
      this.waiting.clear();
    });
  }

  seed(perUser: number): Promise<void> {
    return this.ask({ type: 'seed', perUser }).then(() => undefined);
  }

  start(phase: string): void {
    void this.ask({ type: 'start', phase }).catch(() => undefined);
  }

  /** Ends the current phase and starts a new one; messages arrive in order, so stop() sees it. */
  phase(name: string): void {
    void this.ask({ type: 'phase', name }).catch(() => undefined);
  }

  async stop(): Promise<PhaseReport[]> {
    return (await this.ask({ type: 'stop' })).reports ?? [];
  }

  /** Stops the process itself (after the last stop()). */
  close(): Promise<void> {
    return this.child.stop();
  }

  private ask(request: Request): Promise<ForegroundReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.process.send({ ...request, id });
    });
  }
}
