/**
 * Runs the deploy NATS config locally: 1 node (the cluster block dropped) or a 3-node cluster, with
 * the listen ports rewritten to free loopback ports and JetStream in a temp folder. Everything else
 * — limits, permissions include, per-node variables — is the file the containers run.
 * Used by `check-deploy` (services start against it) and test/e2e/cluster.test.ts.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { natsIncludes } from './nats.mjs';
import { freePort as kernelPort, natsServerBinary } from './util.mjs';

/** The config text with its addresses and store moved; `cluster` null drops the cluster block. */
export function rewriteNatsConfig(text, { port, httpPort, storeDir, clusterPort }) {
  const lines = text.split('\n');
  const out = [];
  let depth = 0;
  let block = '';
  let skipping = false;
  for (const line of lines) {
    const code = line.replace(/#.*$/, '');
    const opens = (code.match(/\{/g) ?? []).length;
    const closes = (code.match(/\}/g) ?? []).length;
    if (depth === 0) {
      const m = /^\s*([A-Za-z_]+)\s*[:=]?\s*\{/.exec(code);
      if (m) block = m[1];
      if (m && block === 'cluster' && clusterPort === null) skipping = true;
    }
    let next = line;
    if (depth === 0 && /^\s*(listen|port)\s*[:=]/.test(code)) next = `listen: 127.0.0.1:${port}`;
    else if (depth === 0 && /^\s*(http|http_port|monitor_port)\s*[:=]/.test(code)) next = `http: 127.0.0.1:${httpPort}`;
    else if (depth > 0 && block === 'jetstream' && /^\s*store_dir\s*[:=]/.test(code)) next = `  store_dir: ${JSON.stringify(storeDir)}`;
    else if (depth > 0 && block === 'cluster' && /^\s*listen\s*[:=]/.test(code)) next = `  listen: 127.0.0.1:${clusterPort}`;
    if (!skipping) out.push(next);
    depth += opens - closes;
    if (depth === 0) {
      if (skipping && closes > 0) skipping = false;
      block = '';
    }
  }
  return out.join('\n');
}

/**
 * Starts `nodes` servers from `configFile`. `env`: the variables the config needs (passwords, …);
 * NATS_SERVER_NAME and NATS_ROUTE_1..3 are set here. Resolves when every node's /healthz is ok.
 *
 * `freePort` picks the ports (default: one the kernel hands out). A test suite passes its own picker,
 * which draws below the kernel's ephemeral range: a stopped node comes back on its ports, and a port
 * from that range can meanwhile be any outgoing connection's local port. Free ports are picked before
 * the servers bind them, so another process can take one in between: on "address already in use" the
 * whole start is tried again with new ports (three times at most).
 */
export async function startNatsFromConfig(opts) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNatsFromConfigOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test(String(err?.message))) throw err;
    }
  }
}

async function startNatsFromConfigOnce({ configFile, nodes = 1, env = {}, timeoutMs = 30_000, freePort = kernelPort }) {
  const dir = mkdtempSync(join(tmpdir(), 'shrooms-deploy-nats-'));
  const text = readFileSync(configFile, 'utf8');
  for (const inc of natsIncludes(configFile)) {
    const src = join(dirname(configFile), inc);
    mkdirSync(dirname(join(dir, inc)), { recursive: true });
    if (existsSync(src)) copyFileSync(src, join(dir, inc));
  }
  const specs = [];
  for (let i = 0; i < nodes; i++) {
    specs.push({ name: `n${i + 1}`, port: await freePort(), httpPort: await freePort(), clusterPort: nodes > 1 ? await freePort() : null });
  }
  const routes = Object.fromEntries(specs.map((s, i) => [`NATS_ROUTE_${i + 1}`, `nats://127.0.0.1:${s.clusterPort ?? 1}`]));
  for (let i = specs.length; i < 3; i++) routes[`NATS_ROUTE_${i + 1}`] = routes.NATS_ROUTE_1;
  const handles = specs.map((s) => {
    const file = join(dir, `${s.name}.conf`);
    writeFileSync(file, rewriteNatsConfig(text, { ...s, storeDir: join(dir, s.name, 'js') }));
    const node = {
      ...s,
      file,
      url: `nats://127.0.0.1:${s.port}`,
      monitorUrl: `http://127.0.0.1:${s.httpPort}`,
      child: undefined,
      stderr: '',
      start() {
        node.stderr = '';
        node.child = spawn(natsServerBinary(), ['-c', file], {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { PATH: process.env.PATH, ...env, ...routes, NATS_SERVER_NAME: s.name },
        });
        node.child.stderr.on('data', (d) => {
          node.stderr = (node.stderr + d).slice(-8000);
        });
      },
      get pid() {
        return node.child?.pid;
      },
      get running() {
        return !!node.child && node.child.exitCode === null && node.child.signalCode === null;
      },
      /** SIGKILL: a crash; the data stays for restart(). */
      kill() {
        node.child?.kill('SIGKILL');
        return waitExit(node.child, 5000);
      },
      async stop() {
        if (!node.running) return;
        node.child.kill('SIGTERM');
        await waitExit(node.child, 10_000);
      },
      async restart() {
        await node.stop();
        node.start();
        await waitHealthy(node, timeoutMs);
      },
    };
    return node;
  });
  const stopAll = async () => {
    await Promise.all(handles.map((h) => h.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const h of handles) h.start();
    await Promise.all(handles.map((h) => waitHealthy(h, timeoutMs)));
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { dir, nodes: handles, url: handles.map((h) => h.url).join(','), stop: stopAll };
}

function waitExit(child, ms) {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** Plain /healthz: for a cluster node that means JetStream has a meta leader and is current. */
async function waitHealthy(node, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!node.running) throw new Error(`nats-server ${node.name} exited: ${node.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    const ok = await fetch(`${node.monitorUrl}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nats-server ${node.name} not healthy within ${timeoutMs} ms: ${node.stderr.trim().split('\n').slice(-3).join(' | ')}`);
}
