import type { Command } from 'commander';

/** Placeholder: registers nothing yet. */
export function registerCtlCommands(_program: Command): void {}
