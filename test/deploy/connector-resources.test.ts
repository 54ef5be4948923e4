/**
 * `timebucket connector config --format strimzi`: each connector as a Strimzi KafkaConnector
 * resource, checked against Strimzi's schema (kafka.strimzi.io/v1beta2, the model kept in
 * strimzi-model/ beside this file) as the manifests under k8s/ are checked against theirs, and
 * printed by the built command the way an operator would pipe it into kubectl.
 */
import { spawnSync } from 'node:child_process';
import { parse as parseYaml } from 'yaml';
import { cliPath } from '../support/cli';
import { schemaErrors, typeErrors } from './k8s-schemas';
import type { K8sObject } from './tools';

const cli = (args: string[]) =>
  spawnSync(process.execPath, [cliPath, 'connector', 'config', '--format', 'strimzi', '--flavour', 'mariadb', ...args], {
    env: { ...process.env, TB_LOG_LEVEL: 'error', TB_GROUP_PREFIX: 'shop' },
    encoding: 'utf8',
    timeout: 20_000,
  });

const printed = (args: string[]): K8sObject => {
  const r = cli(args);
  if (r.status !== 0) throw new Error(`connector config exited ${r.status}: ${r.stderr}`);
  return parseYaml(r.stdout) as K8sObject;
};

test('the capture and the outbox connector, as KafkaConnector resources, are valid for Strimzi', () => {
  const resources = [printed([]), printed(['--outbox', '--strimzi-cluster', 'connect-eu'])];
  expect(typeErrors(resources)).toEqual([]);
  expect(schemaErrors(resources)).toEqual([]);
  const [cdc, outbox] = resources as Array<K8sObject & { spec: { class: string; tasksMax: number; config: Record<string, string> } }>;
  expect(cdc!.metadata).toMatchObject({ name: 'shop-cdc', labels: { 'strimzi.io/cluster': 'shop-connect' } });
  expect(outbox!.metadata).toMatchObject({ name: 'shop-outbox', labels: { 'strimzi.io/cluster': 'connect-eu' } });
  expect(cdc!.spec).toMatchObject({ class: 'io.debezium.connector.mariadb.MariaDbConnector', tasksMax: 1 });
  expect(outbox!.spec.config['transforms.outbox.type']).toBe('io.debezium.transforms.outbox.EventRouter');
  // Strimzi refuses these in spec.config: they are the resource's own fields.
  for (const r of [cdc!, outbox!]) expect(Object.keys(r.spec.config).filter((k) => ['name', 'connector.class', 'tasks.max'].includes(k))).toEqual([]);
});
