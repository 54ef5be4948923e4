/**
 * Structured JSON logs (pino) on stdout; one logger per process, children per component. A
 * destination other than stdout is for tests, which keep each file's logs apart.
 */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string, base: Record<string, unknown> = {}, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { service: 'timebucket', ...base }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
