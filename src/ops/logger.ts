/**
 * Structured JSON logs (pino) on stdout; one logger per process, children per component. A
 * destination other than stdout is for tests, which keep each file's logs apart, and for the
 * operator commands, whose stdout is their result (see `createCommandLogger`).
 */
import pino from 'pino';
import { redactForLog } from './log-redaction';

export type Logger = pino.Logger;

/**
 * Credentials never reach a line, wherever an object carrying them ends up in a log call (a
 * config, a client's options in an error): every argument of a call, the merged object as well as
 * one interpolated into the message, a child's bindings and the base pass through `redactForLog`.
 * It copies what it changes and never writes into the caller's objects: a frozen Config is
 * logged, and an earlier redactor wrote into it and threw.
 */
const hooks: pino.LoggerOptions['hooks'] = {
  logMethod(args, method) {
    method.apply(this, redactArguments(args));
  },
};

/**
 * Pino's `formatters.bindings` sees only the root's bindings (a child's are written as given), so
 * `child` itself is wrapped; children inherit it from the root, whose instance is their prototype.
 */
function redactChildBindings(logger: Logger): Logger {
  type Child = (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => Logger;
  const child = logger.child as unknown as Child;
  const redactingChild: Child = function (bindings, options) {
    return child.call(this, redactOrNote(bindings), options);
  };
  logger.child = redactingChild as unknown as Logger['child'];
  return logger;
}

/**
 * A log call must not throw into its caller nor lose its line because of what it logs (a getter
 * that throws, a proxy): the line is then written with its message and a note instead of its
 * objects, which could not be checked for credentials.
 */
function redactArguments(args: Parameters<pino.LogFn>): Parameters<pino.LogFn> {
  try {
    let copy: unknown[] | undefined;
    for (let i = 0; i < args.length; i += 1) {
      const clean = redactForLog(args[i]);
      if (clean !== args[i]) (copy ??= [...args])[i] = clean;
    }
    return (copy ?? args) as Parameters<pino.LogFn>;
  } catch (error) {
    const rest = args.filter((arg) => arg === null || typeof arg !== 'object');
    return [{ logRedactionFailed: describe(error) }, ...rest] as unknown as Parameters<pino.LogFn>;
  }
}

function redactOrNote(bindings: pino.Bindings): pino.Bindings {
  try {
    return redactForLog(bindings) as pino.Bindings;
  } catch (error) {
    return { logRedactionFailed: describe(error) };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : 'a non-error was thrown';
}

export function createLogger(level: string, base: Record<string, unknown> = {}, destination?: pino.DestinationStream): Logger {
  const root = pino({ level, base: redactOrNote({ service: 'timebucket', ...base }), timestamp: pino.stdTimeFunctions.isoTime, hooks }, destination);
  return redactChildBindings(root);
}

/** For a one-off operator command: logs on stderr, so stdout holds only the command's output. */
export function createCommandLogger(level: string): Logger {
  return createLogger(level, {}, pino.destination({ fd: 2, sync: true }));
}
