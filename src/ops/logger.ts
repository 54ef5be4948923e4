/**
 * Structured JSON logs (pino) on stdout; one logger per process, children per component. A
 * destination other than stdout is for tests, which keep each file's logs apart, and for the
 * operator commands, whose stdout is their result (see `createCommandLogger`).
 */
import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Never logged, wherever an object carrying them ends up in a log call (a config, a client's
 * options in an error): credentials are replaced by "[redacted]".
 */
const SECRET_VARIABLES = ['TB_DB_PASSWORD', 'TB_KAFKA_SASL_PASSWORD', 'TB_REGISTRY_PASSWORD'];
// Password fields only, never whole objects (`sasl`, `auth`): the redactor clones just the paths it
// censors and writes the censor into them, and with a whole object censored as well as a field
// inside it, it wrote into the caller's object itself, which throws on a frozen one (a Config).
const REDACT = [
  ...['password', '*.password', '*.*.password', '*.*.*.password', '*.*.*.*.password'],
  ...SECRET_VARIABLES.flatMap((v) => [v, `*.${v}`]),
];

export function createLogger(level: string, base: Record<string, unknown> = {}, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { service: 'timebucket', ...base }, timestamp: pino.stdTimeFunctions.isoTime, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}

/** For a one-off operator command: logs on stderr, so stdout holds only the command's output. */
export function createCommandLogger(level: string): Logger {
  return createLogger(level, {}, pino.destination({ fd: 2, sync: true }));
}
