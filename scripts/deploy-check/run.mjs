/**
 * "The services actually start from the same commands the containers run": for every container of
 * ours in the compose file and in the k3s manifests, the CLI runs here with that container's
 * command and environment — NATS_URL pointed at a local nats-server started from the deploy NATS
 * config (with its permissions), ports moved to free loopback ports, mounted files and volumes
 * mapped to the repository's files and temp folders — until it is ready: its /readyz answers 200
 * and it is registered with the NATS services API ($SRV). One wave per deployment, then all stop.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { isOurImage, serviceEnv, serviceMounts } from './compose.mjs';
import { containerEnv, containersOf, fieldStandIns, isOurContainer, podSpecOf } from './k8s.mjs';
import { startNatsFromConfig } from './nats-cluster.mjs';
import { freePort, serviceNames, serviceOfCommand } from './util.mjs';

/** Containers of ours in the compose file: { origin, name, command, env, mounts: [{target, source}] }. */
export function composeContainers(compose) {
  const out = [];
  for (const [name, svc] of Object.entries(compose?.services ?? {})) {
    if (!isOurImage(svc) || svc.profiles?.length) continue;
    const command = Array.isArray(svc.command)
      ? svc.command
      : String(svc.command ?? '')
          .split(/\s+/)
          .filter(Boolean);
    const dependsOn = Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {});
    out.push({ origin: 'compose', name, command, env: serviceEnv(svc), mounts: serviceMounts(svc, compose.dir), dependsOn });
  }
  return out;
}

/** Containers of ours in the rendered k3s objects (one per workload: replicas run the same). */
export function k8sContainers(k8s, tmp) {
  const out = [];
  for (const w of k8s?.objects ?? []) {
    const spec = podSpecOf(w);
    for (const c of containersOf(w).filter(isOurContainer)) {
      const { env } = containerEnv(c, k8s.objects, fieldStandIns(w));
      const mounts = [];
      for (const m of c.volumeMounts ?? []) {
        const v = spec.volumes?.find((x) => x.name === m.name);
        const ref = v?.configMap ? ['ConfigMap', v.configMap.name] : v?.secret ? ['Secret', v.secret.secretName] : undefined;
        const obj = ref && k8s.objects.find((o) => o.kind === ref[0] && o.metadata.name === ref[1]);
        if (!obj) continue;
        const dir = join(tmp, 'k3s', w.metadata.name, m.name);
        mkdirSync(dir, { recursive: true });
        for (const [k, val] of Object.entries(obj.data ?? {}))
          writeFileSync(join(dir, k), ref[0] === 'Secret' ? Buffer.from(val, 'base64') : val);
        mounts.push({ target: m.mountPath, source: dir });
      }
      out.push({ origin: 'k3s', name: `${w.kind}/${w.metadata.name}`, command: [...(c.command ?? []), ...(c.args ?? [])], env, mounts });
    }
  }
  return out;
}

/** Maps a container path to a local one: a mount's source, else a folder in `tmp`. */
function localPath(p, mounts, tmp) {
  const m = mounts.filter((x) => p === x.target || p.startsWith(`${x.target}/`)).sort((a, b) => b.target.length - a.target.length)[0];
  if (m?.source) return join(m.source, posix.relative(m.target, p));
  return join(tmp, 'fs', p);
}

async function localize(spec, natsUrl, tmp, gatewayPorts) {
  const env = { ...spec.env, NATS_URL: natsUrl };
  const isPath = (v) => /^\/(data|etc|var|srv|home|opt)(\/|$)/.test(v);
  for (const [k, v] of Object.entries(env)) if (isPath(v)) env[k] = localPath(v, spec.mounts, tmp);
  const command = spec.command.map((a) => (isPath(a) ? localPath(a, spec.mounts, tmp) : a));
  // A mount is a folder in the container; a path below one exists only if something made it (a
  // fresh volume is empty), so only mount points are made here.
  const mountPoints = new Set(spec.mounts.map((m) => localPath(m.target, spec.mounts, tmp)));
  for (const a of command) if (mountPoints.has(a)) mkdirSync(a, { recursive: true });
  if (env.HEALTH_HOST && env.HEALTH_HOST !== '127.0.0.1') env.HEALTH_HOST = '127.0.0.1';
  let healthUrl;
  if (env.HEALTH_PORT) {
    env.HEALTH_PORT = String(await freePort());
    healthUrl = `http://127.0.0.1:${env.HEALTH_PORT}/readyz`;
  }
  if (command[0] === 'gateway') {
    const port = gatewayPorts.get(env.GATEWAY_PORT ?? '7387');
    env.GATEWAY_PORT = String(port);
    healthUrl = `http://${env.GATEWAY_HOST ?? '127.0.0.1'}:${port}/readyz`;
  }
  // URLs of the gateway (scheduler, bridges) follow it to its new port.
  for (const [k, v] of Object.entries(env)) {
    env[k] = String(v).replace(/(https?:\/\/[^/:]+):(\d+)/g, (all, host, port) =>
      gatewayPorts.has(port) ? `${host}:${gatewayPorts.get(port)}` : all,
    );
  }
  return { env, command, healthUrl };
}

/** Some client of any node subscribes `$SRV.PING.<service>`: the service is registered. */
async function registered(nodes, service) {
  for (const node of nodes) {
    const connz = await fetch(`${node.monitorUrl}/connz?subs=true&limit=1024`).then(
      (r) => r.json(),
      () => ({ connections: [] }),
    );
    if ((connz.connections ?? []).some((c) => (c.subscriptions_list ?? []).includes(`$SRV.PING.${service}`))) return true;
  }
  return false;
}

function startOne({ cli, repoRoot, command, env, tmp }) {
  const child = spawn(process.execPath, [...cli.argv, ...command], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: join(tmp, 'home'), TMPDIR: tmpdir(), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const add = (d) => {
    out = (out + d).slice(-20_000);
  };
  child.stdout.on('data', add);
  child.stderr.on('data', add);
  return {
    child,
    output: () => out,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Waits until the started service is ready (true), or reports why not (false). A service that
 * registered but serves no /readyz is a WAIT: it runs, only its probes would fail.
 */
async function waitReady({ origin, spec, local, proc, nats, names, report, timeoutMs }) {
  const what = `${origin} ${spec.name} starts`;
  const service = serviceOfCommand(spec.command[0], names);
  const deadline = Date.now() + timeoutMs;
  let isRegistered = false;
  let health;
  let registeredAt;
  while (Date.now() < deadline) {
    if (proc.exited()) {
      report.fail(what, `exited (${proc.child.exitCode ?? proc.child.signalCode}): ${tail(proc.output())}`);
      return false;
    }
    // The CLI reports a failed start on one line; the process may linger on its NATS connection.
    const fatal = /^shrooms-agent: .*$/m.exec(proc.output());
    if (fatal) {
      report.fail(what, `failed to start: ${fatal[0]}`);
      return false;
    }
    isRegistered ||= service ? await registered(nats.nodes, service) : true;
    if (isRegistered) registeredAt ??= Date.now();
    if (local.healthUrl) {
      health = await fetch(local.healthUrl).then(
        async (r) => ({ code: r.status, body: await r.text() }),
        () => undefined,
      );
    }
    if (isRegistered && health?.code === 200) {
      report.ok(what, `\`shrooms-agent ${spec.command.join(' ')}\` ready (/readyz 200, $SRV ${service ?? '-'})`);
      return true;
    }
    if (isRegistered && !local.healthUrl) {
      report.ok(what, `\`shrooms-agent ${spec.command.join(' ')}\` registered as ${service}; no health endpoint configured`);
      return true;
    }
    // Registered, yet nothing answers on HEALTH_PORT after a while: the probes would fail.
    if (isRegistered && !health && Date.now() - registeredAt > 8_000) {
      report.wait(
        what,
        `registered as ${service}, but nothing serves ${local.healthUrl}: wire startHealthServer (libs/runtime) into its main.ts, or its probes and healthchecks fail`,
      );
      return true;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  report.fail(
    what,
    `not ready within ${timeoutMs / 1000} s (registered: ${isRegistered}; ${local.healthUrl ?? 'no health url'}: ${health ? `${health.code} ${health.body}` : 'no answer'}): ${tail(proc.output())}`,
  );
  return false;
}

/**
 * One deployment's containers against one 3-node cluster. Each starts once the services it
 * depends on (compose depends_on) are ready, as compose orders them; k3s has no order: all at once.
 */
async function wave({ origin, specs, natsEnv, configFile, cli, report, repoRoot, timeoutMs }) {
  if (!specs.length) return;
  const tmp = mkdtempSync(join(tmpdir(), `shrooms-deploy-run-${origin}-`));
  mkdirSync(join(tmp, 'home'));
  const names = serviceNames(repoRoot);
  let nats;
  const procs = [];
  try {
    // Three nodes, as deployed: the services create the ledger and buckets with 3 replicas.
    nats = await startNatsFromConfig({ configFile, nodes: 3, env: natsEnv });
    const gatewayPorts = new Map();
    for (const s of specs) if (s.command[0] === 'gateway') gatewayPorts.set(s.env.GATEWAY_PORT ?? '7387', await freePort());
    const runnable = specs.filter((s) => {
      if (cli.commands.has(s.command[0])) return true;
      report.wait(`${origin} ${s.name} starts`, `skipped: the CLI has no \`${s.command[0]}\` command yet`);
      return false;
    });
    const byName = new Map(runnable.map((s) => [s.name, s]));
    const ready = new Map();
    const startSpec = (s) => {
      if (!ready.has(s.name)) {
        ready.set(
          s.name,
          (async () => {
            for (const dep of (s.dependsOn ?? []).filter((d) => byName.has(d))) {
              if (!(await startSpec(byName.get(dep)))) {
                report.fail(`${origin} ${s.name} starts`, `not started: ${dep}, which it depends on, did not become ready`);
                return false;
              }
            }
            const local = await localize(s, nats.url, tmp, gatewayPorts);
            const proc = startOne({ cli, repoRoot, command: local.command, env: local.env, tmp });
            procs.push(proc);
            return waitReady({ origin, spec: s, local, proc, nats, names, report, timeoutMs });
          })(),
        );
      }
      return ready.get(s.name);
    };
    await Promise.all(runnable.map(startSpec));
  } catch (err) {
    report.fail(`${origin} services start`, err.message);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await nats?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

function tail(text) {
  return text.trim().split('\n').slice(-4).join(' | ').slice(-800);
}

export async function checkServicesStart({ compose, k8s, natsConfig, cli, report, repoRoot, timeoutMs = 90_000 }) {
  if (!cli.helpOk) return report.fail('services start', `the CLI does not run: ${tail(cli.helpOutput)}`);
  const natsService = Object.values(compose?.services ?? {}).find((s) => /^nats(:|$)/.test(String(s.image ?? '')));
  await wave({
    origin: 'compose',
    specs: composeContainers(compose),
    natsEnv: natsService ? serviceEnv(natsService) : {},
    configFile: natsConfig,
    cli,
    report,
    repoRoot,
    timeoutMs,
  });
  const tmp = mkdtempSync(join(tmpdir(), 'shrooms-deploy-k3s-files-'));
  try {
    const natsWorkload = (k8s?.objects ?? []).find((w) => containersOf(w).some((c) => /^nats(:|$)/.test(String(c.image))));
    const natsEnv = natsWorkload
      ? containerEnv(
          containersOf(natsWorkload).find((c) => /^nats(:|$)/.test(String(c.image))),
          k8s.objects,
          fieldStandIns(natsWorkload),
        ).env
      : {};
    await wave({ origin: 'k3s', specs: k8sContainers(k8s, tmp), natsEnv, configFile: natsConfig, cli, report, repoRoot, timeoutMs });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
