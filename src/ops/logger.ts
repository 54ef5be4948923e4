/** Structured JSON logs (pino) on stdout; one logger per process, children per component. */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { service: 'timebucket', ...base }, timestamp: pino.stdTimeFunctions.isoTime });
}
