/**
 * k3s manifests: rendered by `kubectl kustomize` when kubectl is installed (else by a small
 * renderer of the kustomize features we use), every object validated against the Kubernetes
 * schemas of `kubernetes-models` — strictly: a field the schema does not know is an error, as the
 * API server's strict field validation would make it — then what no schema sees: references to
 * ConfigMaps, Secrets, keys, volumes, ports and Services resolve; selectors select; the R3 ledger
 * setting reaches every service; our containers run commands the CLI has.
 *
 * Over 300 lines: the fallback renderer, the strict validation and the cross-reference checks
 * (checkK8s) all work on the same rendered objects, and read best together.
 */
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { onPath, readEnvFile, run, yamlDocuments, readYaml } from './util.mjs';

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass']);
const KUSTOMIZATION_KEYS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'labels',
  'commonLabels',
  'commonAnnotations',
  'resources',
  'images',
  'configMapGenerator',
  'secretGenerator',
  'generatorOptions',
  'patches',
  'replicas',
  'components',
  'namePrefix',
  'nameSuffix',
]);

/** Renders a kustomization directory to objects. */
export function renderKustomization(dir, { useKubectl = onPath('kubectl') } = {}) {
  if (useKubectl) {
    const r = run('kubectl', ['kustomize', dir]);
    if (r.code !== 0) throw new Error(`kubectl kustomize ${dir}: ${r.out.split('\n').slice(-3).join(' ')}`);
    return { objects: yamlDocuments(r.out, 'kustomize output'), renderer: 'kubectl kustomize' };
  }
  return { objects: renderOwn(dir), renderer: 'built-in renderer (kubectl not found)' };
}

function renderOwn(dir) {
  const kfile = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map((f) => join(dir, f)).find(existsSync);
  if (!kfile) throw new Error(`${dir}: no kustomization.yaml`);
  const k = readYaml(kfile) ?? {};
  for (const key of Object.keys(k)) if (!KUSTOMIZATION_KEYS.has(key)) throw new Error(`${kfile}: unknown field ${key}`);
  const objects = [];
  for (const r of k.resources ?? []) {
    const p = resolve(dir, r);
    if (!existsSync(p)) throw new Error(`${kfile}: resource ${r} does not exist`);
    if (statSync(p).isDirectory()) objects.push(...renderOwn(p));
    else objects.push(...yamlDocuments(readFileSync(p, 'utf8'), p));
  }
  const genLabels = k.generatorOptions?.labels ?? {};
  const readFiles = (g) => {
    const data = {};
    for (const lit of g.literals ?? []) {
      const eq = lit.indexOf('=');
      data[lit.slice(0, eq)] = lit.slice(eq + 1);
    }
    for (const f of g.files ?? []) {
      const [key, path] = f.includes('=') ? f.split('=') : [basename(f), f];
      const p = resolve(dir, path);
      if (!existsSync(p)) throw new Error(`${kfile}: ${g.name}: file ${path} does not exist`);
      data[key] = readFileSync(p, 'utf8');
    }
    for (const f of g.envs ?? []) {
      const p = resolve(dir, f);
      if (!existsSync(p)) throw new Error(`${kfile}: ${g.name}: env file ${f} does not exist`);
      Object.assign(data, readEnvFile(p));
    }
    return data;
  };
  for (const g of k.configMapGenerator ?? []) {
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: g.name, labels: { ...genLabels } }, data: readFiles(g) });
  }
  for (const g of k.secretGenerator ?? []) {
    const data = Object.fromEntries(Object.entries(readFiles(g)).map(([key, v]) => [key, Buffer.from(v).toString('base64')]));
    objects.push({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: g.name, labels: { ...genLabels } }, data });
  }
  for (const o of objects) {
    o.metadata ??= {};
    if (k.namespace && !CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
    for (const l of k.labels ?? []) o.metadata.labels = { ...o.metadata.labels, ...l.pairs };
    for (const img of k.images ?? []) {
      for (const c of containersOf(o)) {
        const [name] = String(c.image).split(':');
        if (name === img.name) c.image = `${img.newName ?? name}${img.newTag ? `:${img.newTag}` : ''}`;
      }
    }
  }
  return objects;
}

export function podSpecOf(o) {
  return WORKLOADS.has(o.kind) ? o.spec?.template?.spec : o.kind === 'Pod' ? o.spec : undefined;
}

export function containersOf(o) {
  const spec = podSpecOf(o);
  return spec ? [...(spec.initContainers ?? []), ...(spec.containers ?? [])] : [];
}

export function isOurContainer(c) {
  return /(^|\/)shrooms-agent(:|$)/.test(String(c.image ?? ''));
}

/** Validation that also reports fields the schema does not know (kubernetes-models ignores them). */
async function validateStrict(o) {
  const [group, version] = o.apiVersion?.includes('/') ? o.apiVersion.split('/') : [undefined, o.apiVersion];
  const spec = group ? `kubernetes-models/${group}/${version}/${o.kind}` : `kubernetes-models/${version}/${o.kind}`;
  let cls;
  try {
    cls = (await import(spec))[o.kind];
  } catch {
    return [`unknown apiVersion/kind ${o.apiVersion} ${o.kind}`];
  }
  const seen = new WeakMap();
  const proxies = new WeakMap();
  const wrap = (v) => {
    if (!v || typeof v !== 'object') return v;
    if (proxies.has(v)) return proxies.get(v);
    seen.set(v, new Set());
    const p = new Proxy(v, {
      get(t, key, r) {
        if (typeof key === 'string') seen.get(t).add(key);
        return wrap(Reflect.get(t, key, r));
      },
    });
    proxies.set(v, p);
    return p;
  };
  // The API server decodes Secret data with Go's base64, which skips line breaks (kustomize wraps).
  if (o.kind === 'Secret' && o.data)
    o = { ...o, data: Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, String(v).replace(/\s+/g, '')])) };
  const errors = [];
  try {
    cls.prototype.validate.call(wrap(o));
  } catch (err) {
    errors.push(
      ...String(err.message)
        .split(/,\s*(?=data)/)
        .map((s) => s.replace(/^data/, '')),
    );
  }
  const walk = (v, path) => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}/${i}`));
    const s = seen.get(v);
    for (const key of Object.keys(v)) {
      if (!s?.has(key)) errors.push(`${path}/${key} is not a field of ${o.kind}`);
      else walk(v[key], `${path}/${key}`);
    }
  };
  walk(o, '');
  return errors;
}

/** The environment a container would see; `fields` stands in for the downward API. */
export function containerEnv(c, objects, fields) {
  const find = (kind, name) => objects.find((x) => x.kind === kind && x.metadata?.name === name);
  const dataOf = (kind, name) => {
    const obj = find(kind, name);
    if (!obj) return undefined;
    if (kind === 'Secret')
      return {
        ...Object.fromEntries(Object.entries(obj.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])),
        ...(obj.stringData ?? {}),
      };
    return obj.data ?? {};
  };
  const env = {};
  const problems = [];
  for (const ef of c.envFrom ?? []) {
    const kind = ef.configMapRef ? 'ConfigMap' : 'Secret';
    const name = (ef.configMapRef ?? ef.secretRef)?.name;
    const data = dataOf(kind, name);
    if (!data) problems.push(`envFrom ${kind} ${name} does not exist`);
    else Object.assign(env, data);
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) {
      env[e.name] = String(e.value).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, ref) => {
        if (ref in env) return env[ref];
        problems.push(`env ${e.name} refers to $(${ref}), which is not defined before it`);
        return all;
      });
    } else if (e.valueFrom?.fieldRef) {
      const p = e.valueFrom.fieldRef.fieldPath;
      if (!(p in fields)) problems.push(`env ${e.name}: fieldRef ${p} is not one the checks know`);
      env[e.name] = fields[p] ?? '';
    } else if (e.valueFrom?.configMapKeyRef || e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.configMapKeyRef ?? e.valueFrom.secretKeyRef;
      const kind = e.valueFrom.configMapKeyRef ? 'ConfigMap' : 'Secret';
      const data = dataOf(kind, ref.name);
      if (!data) problems.push(`env ${e.name}: ${kind} ${ref.name} does not exist`);
      else if (!(ref.key in data)) problems.push(`env ${e.name}: ${kind} ${ref.name} has no key ${ref.key}`);
      else env[e.name] = data[ref.key];
    }
  }
  return { env, problems };
}

function matches(selector, labels) {
  return Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
}

/**
 * Env files a generator needs that are absent but have a `.example` beside them (credentials.env
 * is written per installation and never committed): rendered from a temp copy that uses the example.
 */
function withExampleEnvFiles(dir, report, fn) {
  const kfile = join(dir, 'kustomization.yaml');
  const k = existsSync(kfile) ? (readYaml(kfile) ?? {}) : {};
  const missing = [...(k.secretGenerator ?? []), ...(k.configMapGenerator ?? [])]
    .flatMap((g) => g.envs ?? [])
    .filter((f) => !existsSync(join(dir, f)) && existsSync(join(dir, `${f}.example`)));
  if (!missing.length) return fn(dir);
  const tmp = mkdtempSync(join(tmpdir(), 'shrooms-k3s-'));
  try {
    const copy = join(tmp, 'deploy');
    cpSync(dirname(dir), copy, { recursive: true });
    const copied = join(copy, basename(dir));
    for (const f of missing) copyFileSync(join(copied, `${f}.example`), join(copied, f));
    report.note(`${missing.join(', ')} absent: rendering with ${missing.map((f) => `${f}.example`).join(', ')}`);
    return fn(copied);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Bytes of a Kubernetes quantity (`512Mi`, `1G`, `1024`) or a GOMEMLIMIT (`460MiB`); NaN otherwise. */
export function bytesOf(q) {
  const m = /^(\d+(?:\.\d+)?)\s*(|k|K|M|G|T|Ki|Mi|Gi|Ti|KiB|MiB|GiB|TiB|B)$/.exec(String(q).trim());
  if (!m) return NaN;
  const unit = m[2].replace(/B$/, '');
  const mult = { '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }[unit];
  return Number(m[1]) * mult;
}

/**
 * nats-server (Go) under a memory limit: Go's collector does not know the container's limit, so
 * without GOMEMLIMIT below it the server is killed for memory rather than collecting harder.
 */
export function goMemLimitProblem(c, env) {
  const limit = c.resources?.limits?.memory;
  if (!limit || (c.command ?? [])[0] !== 'nats-server') return undefined;
  if (env.GOMEMLIMIT === undefined) return `memory limit ${limit} but no GOMEMLIMIT: Go would not collect harder before the limit`;
  const soft = bytesOf(env.GOMEMLIMIT);
  if (!(soft > 0 && soft < bytesOf(limit))) return `GOMEMLIMIT ${env.GOMEMLIMIT} is not below the memory limit ${limit}`;
  return undefined;
}

export async function checkK8s({ dir, report, cli, repoRoot, useKubectl }) {
  const name = relative(repoRoot, dir) || dir;
  let rendered;
  try {
    rendered = withExampleEnvFiles(dir, report, (d) => renderKustomization(d, { useKubectl }));
  } catch (err) {
    report.fail(`${name} kustomization`, err.message.replaceAll(tmpdir(), '$TMP'));
    return undefined;
  }
  const { objects, renderer } = rendered;
  report.ok(`${name} kustomization`, `${objects.length} objects (${renderer})`);
  let failures = 0;
  for (const o of objects) {
    const id = `${name} ${o.kind}/${o.metadata?.name}`;
    const errors = await validateStrict(o);
    if (errors.length) {
      failures++;
      for (const e of errors) report.fail(id, e);
    }
  }
  if (!failures) report.ok(`${name} schemas`, 'every object valid against the Kubernetes schemas (unknown fields refused)');

  const problems = [];
  const has = (kind, n) => objects.some((x) => x.kind === kind && x.metadata?.name === n);
  const workloads = objects.filter((o) => WORKLOADS.has(o.kind));
  const nats = workloads.find((w) => containersOf(w).some((c) => /^nats(:|$)/.test(String(c.image))));
  if (!nats) problems.push('no NATS workload');
  else if (nats.kind !== 'StatefulSet' || nats.spec.replicas !== 3)
    problems.push(`NATS should be a 3-replica StatefulSet (is ${nats.kind} × ${nats.spec.replicas})`);
  else if (!nats.spec.volumeClaimTemplates?.length)
    problems.push('NATS StatefulSet has no volumeClaimTemplates: JetStream would not persist');

  for (const w of workloads) {
    const id = `${w.kind}/${w.metadata.name}`;
    const spec = podSpecOf(w);
    const labels = w.spec.template?.metadata?.labels;
    if (!matches(w.spec.selector?.matchLabels, labels)) problems.push(`${id}: selector does not select its own pod template`);
    if (w.kind === 'StatefulSet') {
      const svc = objects.find((x) => x.kind === 'Service' && x.metadata.name === w.spec.serviceName);
      if (!svc) problems.push(`${id}: serviceName ${w.spec.serviceName} is not a Service`);
      else if (svc.spec.clusterIP !== 'None') problems.push(`${id}: serviceName ${w.spec.serviceName} is not headless`);
    }
    const volumes = new Set([
      ...(spec.volumes ?? []).map((v) => v.name),
      ...(w.spec.volumeClaimTemplates ?? []).map((v) => v.metadata.name),
    ]);
    for (const v of spec.volumes ?? []) {
      const refs = [
        v.configMap && ['ConfigMap', v.configMap.name],
        v.secret && ['Secret', v.secret.secretName],
        ...(v.projected?.sources ?? []).map((s) =>
          s.configMap ? ['ConfigMap', s.configMap.name] : s.secret ? ['Secret', s.secret.name] : undefined,
        ),
      ].filter(Boolean);
      for (const [kind, n] of refs) if (!has(kind, n)) problems.push(`${id}: volume ${v.name} uses ${kind} ${n}, which does not exist`);
    }
    for (const c of containersOf(w)) {
      const cid = `${id} container ${c.name}`;
      const ports = new Map((c.ports ?? []).map((p) => [p.name ?? String(p.containerPort), p.containerPort]));
      const portNumbers = new Set((c.ports ?? []).map((p) => p.containerPort));
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const port = c[probe]?.httpGet?.port ?? c[probe]?.tcpSocket?.port;
        if (port !== undefined && !(typeof port === 'number' ? portNumbers.has(port) : ports.has(port)))
          problems.push(`${cid}: ${probe} port ${port} is not a container port`);
      }
      for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) problems.push(`${cid}: volumeMount ${m.name} has no volume`);
      const { env, problems: envProblems } = containerEnv(c, objects, fieldStandIns(w));
      problems.push(...envProblems.map((p) => `${cid}: ${p}`));
      const goLimit = goMemLimitProblem(c, env);
      if (goLimit) problems.push(`${cid}: ${goLimit}`);
      if (isOurContainer(c)) {
        if (!c.readinessProbe || !c.livenessProbe) problems.push(`${cid}: needs liveness and readiness probes`);
        if (env.SHROOMS_REPLICAS !== '3')
          problems.push(`${cid}: SHROOMS_REPLICAS is ${env.SHROOMS_REPLICAS ?? 'unset'}; the ledger must be R3`);
        const probePort = c.readinessProbe?.httpGet?.port;
        const served = env.HEALTH_PORT ?? env.GATEWAY_PORT;
        if (probePort !== undefined && served !== undefined && String(ports.get(probePort) ?? probePort) !== String(served)) {
          problems.push(`${cid}: readinessProbe asks port ${ports.get(probePort) ?? probePort} but the service serves health on ${served}`);
        }
        const args = [...(c.command ?? []), ...(c.args ?? [])];
        if (!args.length) problems.push(`${cid}: no args: the image would only print its help`);
        else if (cli?.helpOk && !cli.commands.has(args[0]))
          report.wait(`${name} ${cid} args`, `the CLI has no \`${args[0]}\` command yet (has: ${[...cli.commands].join(', ')})`);
        if (args[0] === 'gateway' && !spec.hostNetwork)
          problems.push(`${cid}: the gateway must run with hostNetwork so source addresses stay real`);
      }
    }
  }
  for (const s of objects.filter((o) => o.kind === 'Service' && o.spec?.selector)) {
    const targets = workloads.filter((w) => matches(s.spec.selector, w.spec.template?.metadata?.labels));
    if (!targets.length) problems.push(`Service/${s.metadata.name}: selector matches no workload`);
    for (const p of s.spec.ports ?? []) {
      if (typeof p.targetPort !== 'string') continue;
      if (!targets.some((w) => containersOf(w).some((c) => (c.ports ?? []).some((cp) => cp.name === p.targetPort))))
        problems.push(`Service/${s.metadata.name}: targetPort ${p.targetPort} is no container port of its pods`);
    }
  }
  for (const pdb of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
    if (!workloads.some((w) => matches(pdb.spec.selector?.matchLabels, w.spec.template?.metadata?.labels)))
      problems.push(`PodDisruptionBudget/${pdb.metadata.name}: selects no workload`);
  }
  for (const p of problems) report.fail(`${name} consistency`, p);
  if (!problems.length) report.ok(`${name} consistency`, 'references, selectors, probes, ports, R3 setting, commands');
  return { dir, objects };
}

/** What the downward API fields stand for in the checks (one node, loopback). */
export function fieldStandIns(w, overrides = {}) {
  return {
    'metadata.name': `${w.metadata.name}-0`,
    'metadata.namespace': w.metadata.namespace ?? 'default',
    'spec.nodeName': 'checknode',
    'status.hostIP': '127.0.0.1',
    'status.podIP': '127.0.0.1',
    ...overrides,
  };
}
