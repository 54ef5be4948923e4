/**
 * The Dockerfile, checked without a Docker engine: parsed as Docker parses it (dockerfile-ast),
 * then held to what the image promises (multi-stage, production dependencies only, non-root,
 * tini as PID 1, no HEALTHCHECK) and to the repository: every path it copies from the build
 * context exists and is not ignored, and the entrypoint is a file `make build` produces.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Copy, DockerfileParser, Instruction } from 'dockerfile-ast';

const root = join(__dirname, '../..');
const dockerfile = DockerfileParser.parse(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const instructions = dockerfile.getInstructions();
const args = (i: Instruction): string[] => i.getArguments().map((a) => a.getValue());
const keyword = (i: Instruction): string => i.getKeyword().toUpperCase();
/** COPY instructions, split by where they copy from: the build context or an earlier stage. */
const copies = instructions.filter((i): i is Copy => i instanceof Copy);
const fromContext = copies.filter((c) => c.getFromFlag() === null);
const fromStage = copies.filter((c) => c.getFromFlag() !== null);

/** The instructions of each stage, in order; a stage starts at its FROM. */
function stages(): Instruction[][] {
  const out: Instruction[][] = [];
  for (const i of instructions) {
    if (keyword(i) === 'FROM') out.push([]);
    out.at(-1)?.push(i);
  }
  return out;
}

/** The JSON-array form of ENTRYPOINT/CMD (the exec form, so signals reach the process). */
function execForm(i: Instruction): string[] {
  const text = i.getRawArgumentsContent() ?? '';
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error(`${keyword(i)} is not in exec form: ${text}`);
  return parsed as string[];
}

describe('Dockerfile', () => {
  const all = stages();
  const final = all.at(-1)!;
  const inFinal = (k: string) => final.filter((i) => keyword(i) === k);

  test('parses without problems, and is multi-stage', () => {
    expect(instructions.length).toBeGreaterThan(5);
    expect(all.length).toBeGreaterThanOrEqual(2);
  });

  test('every base image is pinned to a full version or a digest (no latest, no bare name, no floating major or minor tag)', () => {
    const argDefaults = new Map(
      instructions
        .filter((i) => keyword(i) === 'ARG')
        .map((i) => {
          const [name, value] = (args(i)[0] ?? '').split('=');
          return [name!, value ?? ''];
        }),
    );
    for (const from of instructions.filter((i) => keyword(i) === 'FROM')) {
      const image = args(from)[0]!.replace(/^\$\{?(\w+)\}?$/, (_, name: string) => argDefaults.get(name) ?? '');
      // node:20 or node:20.20-slim moves under the same tag; node:20.20.2-bookworm-slim or @sha256:… does not.
      expect(image).toMatch(/^[\w./-]+(:\d+\.\d+\.\d+(-[\w.-]+)?|@sha256:[0-9a-f]{64})$/);
    }
  });

  test('the build stage compiles with dev dependencies; the final stage installs production dependencies only', () => {
    const runs = (stage: Instruction[]) => stage.filter((i) => keyword(i) === 'RUN').map((i) => i.getRawArgumentsContent() ?? '');
    expect(runs(all[0]!).join('\n')).toMatch(/npm ci(?!.*--omit=dev)/);
    expect(runs(all[0]!).join('\n')).toMatch(/tsc -p tsconfig\.build\.json/);
    expect(runs(final).join('\n')).toMatch(/npm ci --omit=dev/);
    expect(runs(final).join('\n')).not.toMatch(/npm (ci|install)(?!.*--omit=dev)/);
  });

  test('the image runs with production settings: no local-stack defaults', () => {
    const env = inFinal('ENV').flatMap((i) => args(i));
    expect(env).toEqual(expect.arrayContaining(['NODE_ENV=production', 'TB_ENV=production']));
  });

  test('runs as a numeric non-root user (what runAsNonRoot can verify)', () => {
    const users = inFinal('USER');
    expect(users).toHaveLength(1);
    const [uid] = args(users[0]!)[0]!.split(':');
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
  });

  test('tini is PID 1 and execs node on the built CLI; no HEALTHCHECK (Kubernetes probes do that)', () => {
    const [entrypoint] = inFinal('ENTRYPOINT');
    expect(entrypoint).toBeDefined();
    const argv = execForm(entrypoint!);
    expect(argv.slice(0, 3)).toEqual(['/usr/bin/tini', '--', 'node']);
    expect(argv[3]).toBe('/app/dist/cli/main.js');
    expect(instructions.filter((i) => keyword(i) === 'HEALTHCHECK')).toHaveLength(0);
    expect(final.some((i) => keyword(i) === 'RUN' && /apt-get install[^\n]*\btini\b/.test(i.getRawArgumentsContent() ?? ''))).toBe(true);
  });

  test('every path copied from the build context exists and is not excluded by .dockerignore', () => {
    const ignore = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && !l.startsWith('#'));
    // The file excludes everything, then lets back exactly what the image needs.
    expect(ignore[0]).toBe('*');
    const allowed = ignore.slice(1).map((l) => l.replace(/^!/, '').replace(/\/$/, ''));
    expect(fromContext.length).toBeGreaterThan(0);
    for (const copy of fromContext) {
      const sources = args(copy).slice(0, -1);
      for (const source of sources) {
        expect({ source, exists: existsSync(join(root, source)) }).toEqual({ source, exists: true });
        expect(allowed).toContain(source.replace(/\/$/, ''));
      }
    }
  });

  test('what the final stage takes from the build stage is what `make build` produces', () => {
    expect(fromStage.map((c) => [c.getFromFlag()!.getValue(), ...args(c)])).toEqual([['build', '/src/dist', './dist']]);
    // make test builds dist/ before this project runs (the Makefile's test-deploy depends on build).
    expect(existsSync(join(root, 'dist/cli/main.js'))).toBe(true);
    expect(existsSync(join(root, 'dist/db/migrations/index.js'))).toBe(true);
  });
});
