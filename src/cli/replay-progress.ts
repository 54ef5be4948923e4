/**
 * Progress of a long replay on stderr (stdout keeps only the summary, so `--json` stays
 * parseable): one line rewritten in place on a terminal, a plain line every few seconds
 * otherwise (logs, CI).
 */
import type { ReplayCounts } from '../reconcile/replay-bucket';

const TTY_EVERY_MS = 200;
const PLAIN_EVERY_MS = 5_000;

export type Progress = Readonly<{ update: (counts: Readonly<ReplayCounts>) => void; done: () => void }>;

export function progressOnStderr(dryRun: boolean, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): Progress {
  const tty = stream.isTTY === true;
  // From the first figures on: a replay that is over within one interval prints no progress.
  let lastAt: number | undefined;
  let drawn = false;
  return {
    update(c) {
      lastAt ??= now();
      if (now() - lastAt < (tty ? TTY_EVERY_MS : PLAIN_EVERY_MS)) return;
      lastAt = now();
      const done = dryRun ? `${c.due} due` : `${c.transitioned} transitioned`;
      const line = `replay: ${c.entries} entries, ${done}, ${c.alreadyDone} already done, ${c.notDue} not due, ${c.stale} stale`;
      if (tty) {
        stream.write(`\r\x1b[2K${line}`);
        drawn = true;
      } else {
        stream.write(`${line}\n`);
      }
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
