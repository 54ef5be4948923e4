/** What integration tests need to reach the local stack, and unique names for isolation. */
import { randomBytes } from 'node:crypto';
import { basename, join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/ops/logger';

export const config = loadConfig(process.env);

/**
 * The pipeline's logs during a test file go to .stack/reports/logs/<file>.log (under
 * TB_TEST_REPORTS when a lane sets it: run-lanes.js --mysql), so `make test`
 * stays readable and a failure's logs are one file away (TB_TEST_LOG_LEVEL, default info).
 */
export const testLogFile = join(
  process.env['TB_TEST_REPORTS'] ?? join(__dirname, '../../.stack/reports'),
  'logs',
  `${basename(expect.getState().testPath ?? 'integration')}.log`,
);
export const logger = createLogger(
  process.env['TB_TEST_LOG_LEVEL'] ?? 'info',
  { test: true },
  pino.destination({ dest: testLogFile, mkdir: true, append: false, sync: false }),
);

/** A name no other test (or earlier run against the same stack) uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
