/**
 * The deployment checks' tools: promtool and kubectl as stack/install.sh unpacks them from
 * Debian's packages (TB_TOOLS_BIN, stack/env.sh), and the rendered kustomize output.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const repoRoot = join(__dirname, '../..');

export function tool(name: 'promtool' | 'kubectl' | 'prometheus'): string {
  const bin = process.env['TB_TOOLS_BIN'] ?? join(repoRoot, '.stack/lib/tools/usr/bin');
  const path = resolve(bin, name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`make stack-install\` (make test-deploy does)`);
  return path;
}

/** Runs a tool; on failure the error carries its output, so a failing check says why. */
export function runTool(name: 'promtool' | 'kubectl', args: string[], cwd = repoRoot): string {
  try {
    return execFileSync(tool(name), args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
};

/** `kubectl kustomize DIR`, parsed: the objects `kubectl apply -k DIR` would send. */
export function kustomize(dir: string): K8sObject[] {
  const docs = parseAllDocuments(runTool('kubectl', ['kustomize', join(repoRoot, dir)]));
  for (const d of docs) if (d.errors.length > 0) throw new Error(`kustomize output does not parse: ${d.errors[0]!.message}`);
  return docs.map((d) => d.toJS() as K8sObject).filter((o) => o !== null);
}
