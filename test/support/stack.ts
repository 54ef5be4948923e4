/** What integration tests need to reach the local stack, and unique names for isolation. */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/ops/logger';

export const config = loadConfig(process.env);
export const logger = createLogger(process.env['TB_TEST_LOG_LEVEL'] ?? 'warn', { test: true });

/** A name no other test (or earlier run against the same stack) uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
