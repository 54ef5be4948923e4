/**
 * Progress of a long operator command (backfill, replay), on stderr so that stdout keeps only
 * the result: a cli-progress line redrawn in place on a terminal (a bar and an ETA when the total
 * is known), and otherwise (CI, a Kubernetes Job) a structured log line at most every few
 * seconds, from the first update on.
 */
import { Presets, SingleBar } from 'cli-progress';
import type { Logger } from '../ops/logger';

export type ProgressFigures = Readonly<Record<string, number>>;

export type CommandProgress = Readonly<{
  /** `total` undefined: no bar, no ETA (the amount of work is not known up front). */
  start: (what: string, total: number | undefined) => void;
  update: (value: number, figures: ProgressFigures, total?: number) => void;
  stop: () => void;
}>;

export type CommandProgressOptions = Readonly<{
  /** The terminal line after `{what}` and the bar: cli-progress tokens ({value}, {total}, {eta_formatted}) and the figures' names. */
  line: string;
  logger: Logger;
  /** Whether to draw on a terminal; `--json` runs log instead. */
  interactive: boolean;
  stream?: NodeJS.WriteStream;
  now?: () => number;
  logEveryMs?: number;
}>;

export function commandProgress(opts: CommandProgressOptions): CommandProgress {
  const stream = opts.stream ?? process.stderr;
  const now = opts.now ?? Date.now;
  const logEveryMs = opts.logEveryMs ?? 5_000;
  const drawing = opts.interactive && stream.isTTY === true;
  let bar: SingleBar | undefined;
  let what = '';
  let loggedAt: number | undefined;
  return {
    start(name, total) {
      what = name;
      loggedAt = undefined;
      if (!drawing) return;
      bar?.stop();
      const shape = total === undefined ? `{what} ${opts.line}` : `{what} |{bar}| ${opts.line}`;
      bar = new SingleBar({ format: shape, stream, hideCursor: true, etaBuffer: 50 }, Presets.shades_classic);
      bar.start(total ?? 0, 0, { what });
    },
    update(value, figures, total) {
      if (bar) {
        if (total !== undefined) bar.setTotal(total);
        bar.update(value, { what, ...figures });
        return;
      }
      if (drawing) return;
      loggedAt ??= now();
      if (now() - loggedAt < logEveryMs) return;
      loggedAt = now();
      opts.logger.info({ what, value, ...(total !== undefined && { total }), ...figures }, 'progress');
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
