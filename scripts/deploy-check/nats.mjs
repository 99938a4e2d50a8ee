/**
 * NATS config: `nats-server -t -c FILE` for the config every node runs, once with the environment
 * each compose node gives and once with the k3s StatefulSet's — so a variable the config or its
 * permissions need but a deployment does not set fails here, not at 3 a.m. Also: the file each
 * node is told to load is mounted there, with every file it includes beside it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, posix, relative } from 'node:path';
import { serviceEnv, serviceMounts } from './compose.mjs';
import { containerEnv, containersOf, fieldStandIns } from './k8s.mjs';
import { natsServerBinary, run } from './util.mjs';

/** Files a NATS config includes (relative to it), recursively; quotes optional. */
export function natsIncludes(file) {
  const out = [];
  const text = readFileSync(file, 'utf8').replace(/^\s*#.*$/gm, '');
  for (const m of text.matchAll(/^\s*include\s+["']?([^"'\s]+)["']?/gm)) {
    out.push(m[1]);
    const p = join(dirname(file), m[1]);
    if (existsSync(p)) out.push(...natsIncludes(p).map((x) => posix.join(posix.dirname(m[1]), x)));
  }
  return out;
}

/** `$NAME` references of a config and its includes (outside comments and quoted strings). */
export function natsVariables(file) {
  const names = new Set();
  const files = [
    file,
    ...natsIncludes(file)
      .map((f) => join(dirname(file), f))
      .filter(existsSync),
  ];
  for (const f of files) {
    const text = readFileSync(f, 'utf8')
      .replace(/^\s*#.*$/gm, '')
      .replace(/"[^"\n]*"/g, '""');
    for (const m of text.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(m[1]);
  }
  return names;
}

function test(bin, file, env) {
  return run(bin, ['-t', '-c', file], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
}

export function checkNats({ natsDir, compose, k8s, report, repoRoot }) {
  const bin = natsServerBinary();
  if (run(bin, ['--version']).code !== 0) {
    report.fail('nats-server', `not found (${bin}); install it: apt-get install -y nats-server`);
    return;
  }
  if (!existsSync(natsDir)) return report.fail(relative(repoRoot, natsDir), 'missing');
  const confs = readdirSync(natsDir)
    .filter((f) => f.endsWith('.conf'))
    .map((f) => join(natsDir, f));
  const included = new Set(confs.flatMap((f) => natsIncludes(f).map((i) => join(dirname(f), i))));
  const mains = confs.filter((f) => !included.has(f));
  for (const main of mains) {
    const name = relative(repoRoot, main);
    const missing = natsIncludes(main).filter((i) => !existsSync(join(dirname(main), i)));
    if (missing.length) {
      report.fail(name, `includes ${missing.join(', ')}, which does not exist`);
      continue;
    }
    const sources = [];
    for (const [svcName, svc] of Object.entries(compose?.services ?? {})) {
      if (!/^nats(:|$)/.test(String(svc.image ?? ''))) continue;
      sources.push({ what: `compose ${svcName}`, env: serviceEnv(svc) });
      checkMounted(`compose ${svcName}`, svcCommandConfig(svc.command), main, serviceMounts(svc, compose.dir), report, repoRoot);
    }
    for (const w of k8s?.objects ?? []) {
      for (const c of containersOf(w)) {
        if (!/^nats(:|$)/.test(String(c.image))) continue;
        const { env } = containerEnv(c, k8s.objects, fieldStandIns(w));
        sources.push({ what: `k3s ${w.kind}/${w.metadata.name}`, env });
        checkMountedK8s(
          `k3s ${w.kind}/${w.metadata.name}`,
          svcCommandConfig([...(c.command ?? []), ...(c.args ?? [])]),
          main,
          w,
          c,
          k8s.objects,
          report,
        );
      }
    }
    if (!sources.length) {
      const env = Object.fromEntries([...natsVariables(main)].map((v) => [v, `check-${v.toLowerCase()}`]));
      sources.push({ what: 'placeholders for every variable', env });
    }
    for (const { what, env } of sources) {
      const r = test(bin, main, env);
      if (r.code === 0) report.ok(`${name} with ${what}`, 'nats-server -t: valid');
      else report.fail(`${name} with ${what}`, r.out.split('\n').filter(Boolean).pop());
    }
  }
}

function svcCommandConfig(command) {
  const args = Array.isArray(command) ? command : String(command ?? '').split(/\s+/);
  const i = args.findIndex((a) => a === '--config' || a === '-c');
  return i >= 0 ? args[i + 1] : undefined;
}

function checkMounted(what, configPath, main, mounts, report, repoRoot) {
  if (!configPath) return report.fail(what, 'runs nats-server without --config');
  const wanted = [[configPath, main], ...natsIncludes(main).map((i) => [posix.join(posix.dirname(configPath), i), join(dirname(main), i)])];
  const missing = wanted.filter(([target, source]) => !mounts.some((m) => m.target === target && m.source === source));
  if (missing.length) report.fail(what, `does not mount ${missing.map(([t, s]) => `${relative(repoRoot, s)} at ${t}`).join(', ')}`);
  else report.ok(what, `mounts ${wanted.map(([t]) => t).join(', ')}`);
}

function checkMountedK8s(what, configPath, main, w, c, objects, report) {
  if (!configPath) return report.fail(what, 'runs nats-server without --config');
  const dir = posix.dirname(configPath);
  const needed = [basename(configPath), ...natsIncludes(main)];
  const mount = (c.volumeMounts ?? []).find((m) => m.mountPath === dir);
  const volume = mount && (w.spec.template.spec.volumes ?? []).find((v) => v.name === mount.name);
  if (!volume) return report.fail(what, `nothing is mounted at ${dir}`);
  const keys = new Set();
  const sources = volume.projected?.sources ?? [
    volume.configMap ? { configMap: volume.configMap } : { secret: { name: volume.secret?.secretName } },
  ];
  for (const s of sources) {
    const kind = s.configMap ? 'ConfigMap' : 'Secret';
    const o = objects.find((x) => x.kind === kind && x.metadata.name === (s.configMap ?? s.secret)?.name);
    for (const k of Object.keys(o?.data ?? {})) keys.add(k);
  }
  const missing = needed.filter((n) => !keys.has(n));
  if (missing.length) report.fail(what, `${dir} lacks ${missing.join(', ')}`);
  else report.ok(what, `mounts ${needed.map((n) => `${dir}/${n}`).join(', ')}`);
}
