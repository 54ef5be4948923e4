import type { Command } from 'commander';

/** Placeholder: registers nothing yet. */
export function registerBackfillCommand(_program: Command): void {}
