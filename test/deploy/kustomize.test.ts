/**
 * k8s/: the base and the example overlay rendered by kustomize (kubectl's), every object checked
 * against the pinned API schemas with unknown fields rejected (k8s-schemas.ts), then held to
 * what running timebucket needs: the restricted Pod Security Standard on every pod template,
 * probes, resources, a grace period longer than the shutdown deadline, disruption budgets,
 * spread, KEDA that owns the expirer's replica count and never outgrows its partitions.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, PRODUCTION_REQUIRED } from '../../src/config';
import { commandOf } from '../../src/cli/command-setup';
import { timebucketProgram } from '../../src/cli/program';
import { dueTopic } from '../../src/core/topology';
import { groupIdOf } from '../../src/roles';
import { schemaErrors, typeErrors } from './k8s-schemas';
import { K8sObject, kustomize, repoRoot } from './tools';
import { servedMetricNames } from './metric-names';

type Container = {
  name: string;
  image: string;
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string; optional?: boolean } }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
};
type Probe = { httpGet?: { path: string; port?: string | number } };
type DisruptionBudget = K8sObject & {
  spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number | string; minAvailable?: number | string };
};
type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  volumes?: Array<{ name: string; hostPath?: unknown; configMap?: { name: string; optional?: boolean }; secret?: unknown }>;
  terminationGracePeriodSeconds?: number;
  topologySpreadConstraints?: Array<{ topologyKey: string; labelSelector: { matchLabels: Record<string, string> } }>;
};
type Workload = K8sObject & {
  spec: { replicas?: number; selector?: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
};
type ScaledObject = K8sObject & {
  spec: {
    scaleTargetRef: { name: string };
    minReplicaCount?: number;
    maxReplicaCount: number;
    advanced?: { horizontalPodAutoscalerConfig?: { behavior?: { scaleDown?: { stabilizationWindowSeconds?: number } } } };
    triggers: Array<{ type: string; name?: string; metadata: Record<string, unknown> }>;
  };
};

const renders = { base: kustomize('k8s/base'), overlay: kustomize('k8s/overlays/example') };
const objects = renders.overlay;
const ofKind = <T extends K8sObject>(kind: string) => objects.filter((o) => o.kind === kind) as T[];
const deployments = ofKind<Workload>('Deployment');
const jobs = ofKind<Workload>('Job');
const workloads = [...deployments, ...jobs];
const configMap = (prefix: string) => ofKind<K8sObject & { data: Record<string, string> }>('ConfigMap').find((c) => c.metadata.name.startsWith(`${prefix}-`))!;

describe.each(Object.entries(renders))('%s: every object against the Kubernetes, KEDA and Prometheus Operator schemas', (_, rendered) => {
  test('no unknown field, wrong type or missing required field (TypeScript interfaces of the pinned models)', () => {
    expect(typeErrors(rendered)).toEqual([]);
  });

  test("formats, patterns and enums (the models' JSON-schema validators)", () => {
    expect(schemaErrors(rendered)).toEqual([]);
  });
});

describe('the schema check itself', () => {
  test('rejects an unknown field, in a Kubernetes kind and in a KEDA one, and a wrong type', () => {
    const broken = JSON.parse(JSON.stringify([deployments[0], ofKind('ScaledObject')[0]])) as [Workload, ScaledObject];
    (broken[0].spec.template.spec.containers[0] as Record<string, unknown>)['imagePullPolicyy'] = 'Always';
    (broken[1].spec as Record<string, unknown>)['maxReplicas'] = 3;
    (broken[0].spec as Record<string, unknown>)['replicas'] = 'two';
    const errors = typeErrors(broken).join('\n');
    expect(errors).toMatch(/'"imagePullPolicyy"' does not exist in type 'IContainer'/);
    // KEDA's spec type is named (IScaledObjectSpec) in some releases of the models, inline in others.
    expect(errors).toMatch(/^ScaledObject\/.*'"maxReplicas"' does not exist in type/m);
    expect(schemaErrors(broken).join('\n')).toMatch(/spec\/replicas must be integer/);
  });
});

describe('the restricted Pod Security Standard, on every pod template', () => {
  test.each(workloads.map((w) => [`${w.kind}/${w.metadata.name}`, w] as const))('%s', (_, w) => {
    const pod = w.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect([pod.hostNetwork, pod.hostPID, pod.hostIPC].filter(Boolean)).toEqual([]);
    expect((pod.volumes ?? []).filter((v) => v.hostPath !== undefined)).toEqual([]);
    for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(c.securityContext?.privileged).not.toBe(true);
      expect(c.securityContext?.capabilities?.add ?? []).toEqual([]);
    }
  });
});

describe('Deployments', () => {
  const topology = JSON.parse(configMap('timebucket-topology').data['topology.json']!) as {
    prefix: string;
    tiers: Array<{ name: string; ring: number; guard: number; partitions: number }>;
    due: { partitions: number };
  };
  const shutdownMs = Number(configMap('timebucket-config').data['TB_SHUTDOWN_TIMEOUT_MS']);

  test('one per role group, covering every role', () => {
    const roles = deployments.flatMap((d) => d.spec.template.spec.containers[0]!.args!.at(-1)!.split(','));
    expect(roles.sort()).toEqual(['cascader', 'expirer', 'outbox-keeper', 'repartitioner', 'scanner']);
  });

  test.each(deployments.map((d) => [d.metadata.name, d] as const))('%s: probes, resources, grace, spread, disruption budget, image, settings', (_, d) => {
    const pod = d.spec.template.spec;
    const [c] = pod.containers;
    expect(c!.startupProbe?.httpGet?.path).toBe('/readyz');
    expect(c!.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(c!.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(c!.ports).toContainEqual({ name: 'metrics', containerPort: 9464 });
    // Every probe asks a port the container declares, by its name (a renamed port would leave a probe asking nothing).
    const declared = (c!.ports ?? []).map((p) => p.name);
    for (const probe of [c!.startupProbe, c!.readinessProbe, c!.livenessProbe]) expect(declared).toContain(probe?.httpGet?.port);
    expect(c!.resources?.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c!.resources?.limits?.['memory']).toEqual(expect.any(String));
    // A stopping pod gets to its own shutdown deadline, plus margin, before it is killed.
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThanOrEqual(shutdownMs + 5_000);
    expect(pod.topologySpreadConstraints?.map((t) => t.topologyKey)).toEqual(['topology.kubernetes.io/zone', 'kubernetes.io/hostname']);
    for (const t of pod.topologySpreadConstraints!) expect(d.spec.template.metadata.labels).toMatchObject(t.labelSelector.matchLabels);
    const pdbs = ofKind<DisruptionBudget>('PodDisruptionBudget').filter((p) =>
      Object.entries(p.spec.selector.matchLabels).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
    );
    expect(pdbs).toHaveLength(1);
    // The budget lets a node drain: at the fewest replicas the Deployment runs (KEDA's minimum for the expirer), one pod may go.
    const fewest = d.spec.replicas ?? ofKind<ScaledObject>('ScaledObject').find((o) => o.spec.scaleTargetRef.name === d.metadata.name)!.spec.minReplicaCount!;
    const { maxUnavailable, minAvailable } = pdbs[0]!.spec;
    const mayGo = maxUnavailable !== undefined ? Number(maxUnavailable) : fewest - Number(minAvailable);
    expect(Number.isInteger(mayGo) && mayGo >= 1 && mayGo < fewest).toBe(true);
    // The overlay's image, pinned to a version.
    expect(c!.image).toMatch(/^[\w./-]+:\d+\.\d+\.\d+$/);
    // Settings from the generated ConfigMap (its hashed name: a change rolls the pods), secrets by reference.
    // Kafka's SASL credentials for every role; none needs the registry's (the schemas-register
    // Job saves the schema ids the processes read).
    expect(c!.envFrom).toEqual([
      { configMapRef: { name: configMap('timebucket-config').metadata.name } },
      { secretRef: { name: 'timebucket-db' } },
      { secretRef: { name: 'timebucket-kafka', optional: true } },
    ]);
    expect(configMap('timebucket-config').metadata.name).toMatch(/^timebucket-config-[a-z0-9]{10}$/);
    // The heap is capped below the memory limit: the old generation and the young one (three semi-spaces).
    const nodeOptions = c!.env!.find((e) => e.name === 'NODE_OPTIONS')!.value!;
    const semiSpaceMb = Number(/--max-semi-space-size=(\d+)/.exec(nodeOptions)?.[1] ?? 16);
    const heapMb = Number(/--max-old-space-size=(\d+)/.exec(nodeOptions)![1]) + 3 * semiSpaceMb;
    const limitMb =
      Number(/^(\d+)Gi$/.exec(c!.resources!.limits!['memory']!)?.[1] ?? 0) * 1024 || Number(/^(\d+)Mi$/.exec(c!.resources!.limits!['memory']!)![1]);
    expect(heapMb).toBeLessThanOrEqual(limitMb * 0.8);
  });

  test('KEDA owns the expirer: no replicas on it, at most one replica per partition it reads, a calm scale-down', () => {
    const scaled = ofKind<ScaledObject>('ScaledObject');
    expect(scaled.map((s) => s.spec.scaleTargetRef.name)).toEqual(['timebucket-expirer']);
    for (const s of scaled) {
      const target = deployments.find((d) => d.metadata.name === s.spec.scaleTargetRef.name)!;
      expect(target.spec.replicas).toBeUndefined();
      // The expirer reads the finest ring and the due lane; a member beyond the larger one's partitions idles.
      expect(s.spec.maxReplicaCount).toBeLessThanOrEqual(Math.max(topology.tiers[0]!.partitions, topology.due.partitions));
      expect(s.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
      expect(s.spec.advanced?.horizontalPodAutoscalerConfig?.behavior?.scaleDown?.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
      expect(s.spec.triggers.map((t) => t.name ?? t.type).sort()).toEqual(['due-ahead', 'kafka', 'prometheus']);
      // KEDA reads trigger metadata as strings: a bare number or boolean in YAML is rejected or misread.
      for (const t of s.spec.triggers)
        for (const [key, value] of Object.entries(t.metadata)) expect({ key, type: typeof value }).toEqual({ key, type: 'string' });
      const kafka = s.spec.triggers.find((t) => t.type === 'kafka')!.metadata;
      // The group and the lane the expirer reads, from the settings and the topology it runs with.
      expect(kafka).toMatchObject({ consumerGroup: groupIdOf(configMap('timebucket-config').data['TB_GROUP_PREFIX']!, 'expirer'), topic: dueTopic(topology) });
      const prometheus = s.spec.triggers.find((t) => t.type === 'prometheus' && t.name === undefined)!.metadata;
      expect(prometheus['query']).toMatch(/^sum\(timebucket_due_lag_messages\{[^}]*stage="expirer"[^}]*\}\)$/);
      // Scoped to this deployment: a Prometheus scraping several environments must not mix their lag.
      expect(prometheus['query']).toContain(`namespace="${s.metadata.namespace}"`);
      expect(prometheus['query']).toContain('job="timebucket"');
      // Before a known spike: the finest tier's next buckets, within its horizon, the same figure
      // from every publisher pod counted once, scoped like the due lag.
      const ahead = s.spec.triggers.find((t) => t.name === 'due-ahead')!;
      expect(ahead.type).toBe('prometheus');
      const query = String(ahead.metadata['query']);
      expect(query).toMatch(/^max\(sum by \(pod\) \(timebucket_forecast_entries\{[^}]*\}\)\)$/);
      expect(query).toContain(`tier="${topology.tiers[0]!.name}"`);
      expect(query).toContain(`namespace="${s.metadata.namespace}"`);
      expect(query).toContain('job="timebucket"');
      const positions = /position=~"([^"]+)"/.exec(query)![1]!.split('|').map(Number);
      const finest = topology.tiers[0]!;
      for (const p of positions) expect(p).toBeGreaterThanOrEqual(1);
      for (const p of positions) expect(p).toBeLessThan(finest.ring - finest.guard);
      expect(servedMetricNames()).toContain('timebucket_forecast_entries');
    }
    expect(deployments.filter((d) => !scaled.some((s) => s.spec.scaleTargetRef.name === d.metadata.name)).every((d) => (d.spec.replicas ?? 0) >= 2)).toBe(true);
  });
});

describe('the rest', () => {
  test('no Secret is rendered: every secret is referenced, never inlined', () => {
    expect(ofKind('Secret')).toEqual([]);
    const referenced = workloads.flatMap((w) =>
      w.spec.template.spec.containers.flatMap((c) => (c.envFrom ?? []).flatMap((e) => (e.secretRef ? [e.secretRef.name] : []))),
    );
    expect([...new Set(referenced)].sort()).toEqual(['timebucket-db', 'timebucket-db-owner', 'timebucket-kafka', 'timebucket-registry']);
  });

  test('every setting production requires is given: by the ConfigMap, or by the database Secrets (user and password)', () => {
    const fromSecrets = ['TB_DB_USER', 'TB_DB_PASSWORD'];
    const data = configMap('timebucket-config').data;
    expect(PRODUCTION_REQUIRED.filter((name) => !fromSecrets.includes(name) && !data[name])).toEqual([]);
  });

  // The Secrets' keys, as the overlay's comments tell operators to create them.
  const secretKeys: Record<string, Record<string, string>> = {
    'timebucket-db': { TB_DB_USER: 'user', TB_DB_PASSWORD: 'secret' },
    'timebucket-db-owner': { TB_DB_USER: 'owner', TB_DB_PASSWORD: 'secret' },
    'timebucket-kafka': { TB_KAFKA_SASL_USERNAME: 'user', TB_KAFKA_SASL_PASSWORD: 'secret' },
    'timebucket-registry': { TB_REGISTRY_USERNAME: 'user', TB_REGISTRY_PASSWORD: 'secret' },
  };
  const caPem = join(mkdtempSync(join(tmpdir(), 'tb-k8s-ca-')), 'ca.pem');
  writeFileSync(caPem, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

  test.each(workloads.map((w) => [w.metadata.name, w] as const))(
    '%s: its command starts with the environment it is given, in production (no exit 78)',
    (_, w) => {
      const pod = w.spec.template.spec;
      const [c] = pod.containers;
      const env: Record<string, string> = { TB_ENV: 'production' };
      for (const from of c!.envFrom ?? []) {
        if (from.configMapRef) Object.assign(env, configMap('timebucket-config').data);
        if (from.secretRef) Object.assign(env, secretKeys[from.secretRef.name]);
      }
      for (const e of c!.env ?? []) env[e.name] = e.value ?? 'from-a-reference';
      // A CA file the settings name lies in a volume of this pod, mounted from the CA ConfigMap;
      // the test reads a stand-in PEM there.
      for (const name of Object.keys(env).filter((n) => n.endsWith('_CA_FILE'))) {
        const mount = c!.volumeMounts?.find((m) => env[name]!.startsWith(`${m.mountPath}/`));
        expect({ name, volume: pod.volumes?.find((v) => v.name === mount?.name)?.configMap?.name }).toEqual({ name, volume: 'timebucket-ca' });
        env[name] = caPem;
      }
      expect(() => loadConfig(env, { uses: commandOf(timebucketProgram({}), c!.args ?? [])!.needs!.uses })).not.toThrow();
    },
  );

  test('the example overlay secures every connection: SASL_SSL to Kafka, TLS to the database, https to the registry', () => {
    expect(configMap('timebucket-config').data).toMatchObject({
      TB_KAFKA_SSL: 'on',
      TB_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      TB_DB_TLS: 'on',
      TB_REGISTRY_URL: expect.stringMatching(/^https:\/\//),
    });
  });

  test("migrate runs as the owner user; topics apply needs no database user, migrate no Kafka credentials, schemas register the registry's", () => {
    const job = (name: string) => jobs.find((j) => j.metadata.name === name)!.spec.template.spec.containers[0]!;
    expect(job('timebucket-migrate').args).toEqual(['migrate']);
    expect(job('timebucket-migrate').envFrom).toContainEqual({ secretRef: { name: 'timebucket-db-owner' } });
    expect(job('timebucket-topics-apply').args).toEqual(['topics', 'apply']);
    // topics apply talks to Kafka only; migrate to the database only.
    expect(job('timebucket-topics-apply').envFrom?.flatMap((e) => (e.secretRef ? [e.secretRef.name] : []))).toEqual(['timebucket-kafka']);
    expect(job('timebucket-migrate').envFrom?.flatMap((e) => (e.secretRef ? [e.secretRef.name] : []))).toEqual(['timebucket-db-owner']);
    // schemas register: the registry, and the database the ids are saved in.
    expect(job('timebucket-schemas-register').args).toEqual(['schemas', 'register']);
    expect(job('timebucket-schemas-register').envFrom?.flatMap((e) => (e.secretRef ? [e.secretRef.name] : []))).toEqual([
      'timebucket-db',
      'timebucket-registry',
    ]);
  });

  test('the PodMonitor scrapes every Deployment\'s metrics port, with job="timebucket"', () => {
    const [monitor] = ofKind<
      K8sObject & { spec: { jobLabel: string; selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ port: string }> } }
    >('PodMonitor');
    expect(monitor!.spec.podMetricsEndpoints.map((e) => e.port)).toEqual(['metrics']);
    for (const d of deployments) {
      expect(d.spec.template.metadata.labels).toMatchObject(monitor!.spec.selector.matchLabels);
      expect(d.spec.template.metadata.labels[monitor!.spec.jobLabel]).toBe('timebucket');
    }
  });

  test("the ServiceAccount mounts no token; every object lands in the overlay's namespace", () => {
    const [account] = ofKind<K8sObject & { automountServiceAccountToken?: boolean }>('ServiceAccount');
    expect(account!.automountServiceAccountToken).toBe(false);
    expect(objects.filter((o) => o.metadata.namespace !== 'timebucket').map((o) => o.kind)).toEqual([]);
  });

  test("the base's topology is topics/production.json, and its entities file entities/default.json, byte for byte", () => {
    expect(readFileSync(join(repoRoot, 'k8s/base/topology.json'), 'utf8')).toBe(readFileSync(join(repoRoot, 'topics/production.json'), 'utf8'));
    expect(readFileSync(join(repoRoot, 'k8s/base/entities.json'), 'utf8')).toBe(readFileSync(join(repoRoot, 'entities/default.json'), 'utf8'));
    expect(configMap('timebucket-topology').data['entities.json']).toBe(readFileSync(join(repoRoot, 'entities/default.json'), 'utf8'));
  });
});
