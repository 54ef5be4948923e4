/**
 * A connector's configuration as a Strimzi KafkaConnector resource (kafka.strimzi.io/v1beta2),
 * the way Kubernetes users run Connect: the operator owns the connector and registers
 * spec.config with the cluster its `strimzi.io/cluster` label names (a KafkaConnect resource
 * with the annotation strimzi.io/use-connector-resources: "true"). Strimzi refuses name,
 * connector.class and tasks.max in spec.config: they are the resource's name, spec.class and
 * spec.tasksMax. Checked against Strimzi's schema in `make test` (test/deploy/connector-resources.test.ts).
 */
export type KafkaConnectorResource = Readonly<{
  apiVersion: 'kafka.strimzi.io/v1beta2';
  kind: 'KafkaConnector';
  metadata: Readonly<{ name: string; labels: Readonly<Record<string, string>> }>;
  spec: Readonly<{ class: string; tasksMax: number; autoRestart: Readonly<{ enabled: boolean }>; config: Readonly<Record<string, string>> }>;
}>;

const OWN_FIELDS = new Set(['name', 'connector.class', 'tasks.max']);

export function strimziConnector(name: string, config: Readonly<Record<string, string>>, cluster: string): KafkaConnectorResource {
  const rest = Object.fromEntries(Object.entries(config).filter(([k]) => !OWN_FIELDS.has(k)));
  return {
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'KafkaConnector',
    metadata: { name, labels: { 'strimzi.io/cluster': cluster, 'app.kubernetes.io/part-of': 'timebucket' } },
    // A failed task restarted by the operator (with backoff): what the runbook would do first.
    spec: { class: config['connector.class']!, tasksMax: Number(config['tasks.max'] ?? '1'), autoRestart: { enabled: true }, config: rest },
  };
}
