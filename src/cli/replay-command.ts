import type { Command } from 'commander';

/** Placeholder: registers nothing yet. */
export function registerReplayCommands(_program: Command): void {}
