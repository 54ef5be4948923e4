/**
 * Where things are, from the compiled bench (dist-bench/bench/lib/*.js): the CLI compiled beside
 * it (tsconfig.bench.json compiles src too), and the repository's topology files and results.
 */
import { join } from 'node:path';

const distRoot = join(__dirname, '../..');
export const repoRoot = join(distRoot, '..');
export const cliPath = join(distRoot, 'src/cli/main.js');
export const topicsDir = join(repoRoot, 'topics');
export const defaultResultsDir = join(repoRoot, 'bench/results');
