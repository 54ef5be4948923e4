/**
 * Kubernetes objects checked against the API schemas, offline, at the versions package-lock.json
 * pins: kubernetes-models (the Kubernetes API), @kubernetes-models/keda (KEDA's CRDs) and
 * @kubernetes-models/prometheus-operator (PodMonitor, PrometheusRule), each at its Node 20 line
 * (4.x); Strimzi's KafkaConnector from strimzi-model/ beside this file, the three files of
 * @kubernetes-models/strimzi-kafka-operator it needs (that package has no release for Node 20:
 * strimzi-model/README.md). Two checks, because each catches what the other cannot:
 *
 *  - the TypeScript compiler, with each object as a literal of its kind's generated interface:
 *    an unknown or misspelled field anywhere is an excess-property error (the API server's
 *    strict field validation), a wrong type or a missing required field a type error;
 *  - the packages' JSON-schema validators at run time (formats, patterns, enums), in a child
 *    process because the packages are ES modules only.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import ts from 'typescript';
import type { K8sObject } from './tools';
import { repoRoot } from './tools';

/** The module of a kind's model, from apiVersion (group/version) and kind. */
export function modelModule(o: Pick<K8sObject, 'apiVersion' | 'kind'>): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  if (group === 'keda.sh') return `@kubernetes-models/keda/keda.sh/${version}/${o.kind}`;
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/monitoring.coreos.com/${version}/${o.kind}`;
  if (group === 'kafka.strimzi.io') return join(repoRoot, `test/deploy/strimzi-model/${o.kind}.js`);
  return group === '' ? `kubernetes-models/${version}/${o.kind}` : `kubernetes-models/${group}/${version}/${o.kind}`;
}

/** Type errors of `objects` as literals of their kinds' interfaces, one line each ([] when valid). */
export function typeErrors(objects: readonly K8sObject[]): string[] {
  const fileName = join(repoRoot, 'test/deploy/__rendered_objects__.ts');
  const chunks = objects.map(
    (o, i) => `import type { I${o.kind} as T${i} } from '${modelModule(o)}';\nexport const o${i}: T${i} = ${JSON.stringify(o, null, 1)};\n`,
  );
  // Where each object's chunk starts, to name the object an error is in.
  const starts = chunks.map((_, i) => chunks.slice(0, i).join('').length);
  const source = chunks.join('');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const getSource = host.getSourceFile.bind(host);
  host.readFile = (f) => (f === fileName ? source : read(f));
  host.fileExists = (
    (exists) => (f: string) =>
      f === fileName || exists(f)
  )(host.fileExists.bind(host));
  host.getSourceFile = (f, lang, ...rest) => (f === fileName ? ts.createSourceFile(f, source, lang) : getSource(f, lang, ...rest));
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const index = d.file?.fileName === fileName && d.start !== undefined ? starts.filter((s) => s <= d.start!).length - 1 : -1;
    const object = objects[index];
    const name = object ? `${object.kind}/${object.metadata.name}` : (d.file?.fileName ?? '?');
    return `${name}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

const validatorScript = `
const objects = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
(async () => {
  const errors = [];
  for (const { module, object } of objects) {
    const Model = (await import(module))[object.kind];
    try { new Model(object).validate(); } catch (err) { errors.push(object.kind + '/' + object.metadata.name + ': ' + err.message); }
  }
  process.stdout.write(JSON.stringify(errors));
})().catch((err) => { console.error(err); process.exit(2); });
`;

/** Schema-validator errors of `objects`, one line each ([] when valid). */
export function schemaErrors(objects: readonly K8sObject[]): string[] {
  const input = JSON.stringify(objects.map((object) => ({ module: modelModule(object), object })));
  const r = spawnSync(process.execPath, ['-e', validatorScript], { cwd: repoRoot, input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the schema validators did not run: ${r.stderr}`);
  return JSON.parse(r.stdout) as string[];
}
