/**
 * Devices on real network addresses for tests: each a network namespace joined to this host by a
 * veth pair (`PREFIXvN` here, `PREFIXvNp` inside, 198.18.N.0/24: the host is .1, the device .2),
 * so a server on the host that binds 198.18.N.1 sees the device's requests coming from 198.18.N.2.
 * Requests are made from inside by a small agent (http-agent.mjs) that sends any header as given.
 *
 * Everything carries the prefix; teardown kills the agents by pid and deletes the namespaces (their
 * veths go with them). It also runs when the test process exits without it, and a run that crashed
 * is swept at the next start. Needs root and `ip`.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sweepNamespaces } from './sweep.js';

export interface NetnsDevice {
  readonly ns: string;
  /** The device's own address (what a server sees as the source). */
  readonly address: string;
  /** This host's address on the device's link (what a server binds to be reachable from it). */
  readonly hostAddress: string;
  request(url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<NetnsResponse>;
}

export interface NetnsResponse {
  status: number;
  headers: Record<string, string | string[]>;
  text: string;
  json(): any;
}

export interface Netns {
  devices: NetnsDevice[];
  teardown(): void;
}

/** Why namespaces cannot be made here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  if (spawnSync('sh', ['-c', 'command -v ip']).status !== 0) return 'missing ip (apt-get install -y iproute2)';
  return undefined;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

function sweep(prefix: string): void {
  sweepNamespaces(prefix);
  for (let i = 0; i < 16; i++) spawnSync('ip', ['link', 'del', `${prefix}v${i}`], { stdio: 'ignore' });
}

/** `names.length` devices (at most 16), namespaces `PREFIX-NAME`. */
export async function startNetns(prefix: string, names: string[]): Promise<Netns> {
  const why = netnsUnavailable();
  if (why) throw new Error(why);
  sweep(prefix);
  const agents: ChildProcess[] = [];
  let down = false;
  const teardown = () => {
    if (down) return;
    down = true;
    for (const a of agents) a.kill('SIGKILL');
    sweep(prefix);
  };
  process.once('exit', teardown);
  try {
    const devices = await Promise.all(
      names.map(async (name, i) => {
        const ns = `${prefix}-${name}`;
        const [here, there] = [`${prefix}v${i}`, `${prefix}v${i}p`];
        const [hostAddress, address] = [`198.18.${i}.1`, `198.18.${i}.2`];
        ip('netns', 'add', ns);
        ip('link', 'add', here, 'type', 'veth', 'peer', 'name', there);
        ip('link', 'set', there, 'netns', ns);
        ip('addr', 'add', `${hostAddress}/24`, 'dev', here);
        ip('link', 'set', here, 'up');
        ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', there);
        ip('-n', ns, 'link', 'set', there, 'up');
        ip('-n', ns, 'link', 'set', 'lo', 'up');
        return { ns, address, hostAddress, request: await agent(ns, agents) };
      }),
    );
    return { devices, teardown };
  } catch (err) {
    teardown();
    throw err;
  }
}

async function agent(ns: string, agents: ChildProcess[]): Promise<NetnsDevice['request']> {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, join(import.meta.dirname, 'http-agent.mjs')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  agents.push(child);
  const waiting = new Map<number, (r: any) => void>();
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const m = JSON.parse(line);
    if (m.ready) return ready();
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  });
  await started;
  let next = 0;
  return (url, init = {}) =>
    new Promise<NetnsResponse>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (m) => {
        if (m.error) return reject(new Error(`${ns}: ${m.error}`));
        resolve({ status: m.status, headers: m.headers, text: m.text, json: () => JSON.parse(m.text) });
      });
      child.stdin!.write(`${JSON.stringify({ ...init, url, id })}\n`);
    });
}
