/**
 * No import cycles in src/: each module can be read (and loaded) after the ones it imports.
 * A cycle is how a leaf (a group id, a role list) ends up depending on the whole wiring.
 * Relative imports only (packages cannot import us); `import type` counts too: a type
 * dependency is still a dependency a reader has to follow.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const src = join(__dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g)].map((m) => m[1]!);
  return specs.map((s) => resolve(dirname(file), s)).map((p) => (p.endsWith('.ts') ? p : `${p}.ts`));
}

test('src/ has no import cycle', () => {
  const files = sources(src);
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((i) => files.includes(i))]));
  const cycles: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (f: string, path: string[]) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'visiting') {
      cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(src, p)).join(' → '));
      return;
    }
    state.set(f, 'visiting');
    for (const next of graph.get(f) ?? []) visit(next, [...path, f]);
    state.set(f, 'done');
  };
  for (const f of files) visit(f, []);
  expect(cycles).toEqual([]);
});
