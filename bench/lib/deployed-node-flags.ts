/**
 * The node flags a role is deployed with (NODE_OPTIONS in k8s/base/deployment-<deployment>.yaml),
 * the heap cap aside: that one is the pod's memory limit, not this machine's. What is left is the
 * young generation's size (--max-semi-space-size), which decides how much of a hot minute's
 * short-lived garbage the scavenger copies; the bench runs each role as deployed, so it reads
 * them from the manifests rather than keeping a copy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './paths';

type Deployment = { spec?: { template?: { spec?: { containers?: Array<{ env?: Array<{ name: string; value?: string }> }> } } } };

/** `deployment`: expirer, repartitioner or publisher (the file's suffix). */
export function deployedNodeFlags(deployment: string): string[] {
  const text = readFileSync(join(repoRoot, 'k8s/base', `deployment-${deployment}.yaml`), 'utf8');
  const docs = parseAllDocuments(text).map((d) => d.toJS() as Deployment);
  const options =
    docs
      .flatMap((d) => d.spec?.template?.spec?.containers ?? [])
      .flatMap((c) => c.env ?? [])
      .find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
  return options.split(/\s+/).filter((flag) => flag.length > 0 && !flag.startsWith('--max-old-space-size'));
}

/** The deployment a process of these roles stands for (`timebucket run --roles …`, as k8s/base groups them). */
export function deploymentOfRoles(roles: string): string {
  const list = roles.split(',');
  if (list.includes('expirer')) return 'expirer';
  if (list.includes('repartitioner')) return 'repartitioner';
  return 'publisher';
}
