/**
 * docs/architecture.md's walk of one coupon names a file and a function for each step: every
 * file must exist and declare every function named beside it (a function, a method, a class or a
 * const), so a rename or a move that leaves the walk behind fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../../..');
const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');

/** The walk's table rows: [step, files, names]. */
function walkRows(): Array<{ step: string; files: string[]; names: string[] }> {
  const section = doc.split("## One coupon's walk, from its row to its event")[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => /^\| \d+ \|/.test(line))
    .map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      const code = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      return { step: cells[1]!, files: code(cells[3]!), names: code(cells[4]!) };
    });
}

/** Declared in `source`: `function name`, `class name`, `const name =`, or a method `name(` / `name<` at a line's start. */
function declares(source: string, name: string): boolean {
  const n = name.replace(/[$]/g, '\\$');
  return new RegExp(
    `(function\\s+${n}\\b|class\\s+${n}\\b|const\\s+${n}\\s*[=:]|^\\s*(?:(?:private|protected|public|static|async|readonly)\\s+)*${n}\\s*[(<])`,
    'm',
  ).test(source);
}

test('the walk has its steps in order, each with a file and a function', () => {
  const rows = walkRows();
  expect(rows.length).toBeGreaterThanOrEqual(10);
  expect(rows.map((r) => Number(r.step))).toEqual(rows.map((_, i) => i + 1));
  for (const r of rows) {
    expect({ step: r.step, files: r.files.length > 0, names: r.names.length > 0 }).toEqual({ step: r.step, files: true, names: true });
  }
});

test('every file the walk names exists and declares a function it names', () => {
  const missing: string[] = [];
  for (const r of walkRows()) {
    const sources = r.files.map((f) => {
      if (!existsSync(join(root, f))) missing.push(`step ${r.step}: ${f} does not exist`);
      return existsSync(join(root, f)) ? readFileSync(join(root, f), 'utf8') : '';
    });
    for (const name of r.names)
      if (!sources.some((s) => declares(s, name))) missing.push(`step ${r.step}: ${name} is declared in none of ${r.files.join(', ')}`);
  }
  expect(missing).toEqual([]);
});

test('a name that no file declares is caught', () => {
  expect(declares('export function sendRouted(opts) {}', 'sendRouted')).toBe(true);
  expect(declares('  private async onBatch({ batch }) {', 'onBatch')).toBe(true);
  expect(declares('  private commitDirty(): Promise<void> {', 'commitDirty')).toBe(true);
  expect(declares('    await this.onBatch(payload);', 'onBatch')).toBe(false);
  expect(declares('export function sendRoutedAll() {}', 'sendRouted')).toBe(false);
});
