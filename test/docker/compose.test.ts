/**
 * deploy/compose/docker-compose.yml run for real (Debian's docker-compose 1.29 against the private
 * engine, the image built from deploy/Dockerfile by the setup): the 3-node NATS cluster on the
 * compose network, our services on the host network as the file says. An ask through the gateway
 * reaches the echo session and its task reads back; then the NATS node leading the ledger and a
 * guard replica are killed (SIGKILL from the host, as a crash) and the mesh keeps answering with
 * every acknowledged task read back completed — and the restart policy brings both back healthy.
 *
 * The file's ports are fixed (4222-4224, 8222-8224 and the services' on loopback): the test checks
 * they are free first and says which one is not.
 */
import { cpSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { BUCKETS, ERRORS, type ErrorKey } from '@shrooms/protocol';
import { DOCKER_BIN, DOCKER_COMPOSE_BIN, REPO_ROOT, run, tempDir, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const docker = inject('docker');
const PROJECT = 'shd';
const GATEWAY = 'http://127.0.0.1:7387';
const PORTS = [4222, 4223, 4224, 8222, 8223, 8224, 7387, 9101, 9102, 9111, 9112, 9121];
const SERVICES = ['nats-1', 'nats-2', 'nats-3', 'gateway', 'guard-1', 'guard-2', 'scheduler-1', 'scheduler-2', 'bridge-demo'];

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

describe.skipIf(!docker)('the compose file under a real Docker engine', () => {
  let temp: TempDir | undefined;
  let composeDir = '';
  const env = () => ({ ...docker!.env, NATS_IMAGE: docker!.natsImage, SHROOMS_IMAGE: docker!.image });
  const compose = (args: string[]) =>
    run(DOCKER_COMPOSE_BIN, ['-p', PROJECT, ...args], { cwd: composeDir, env: env(), timeoutMs: 300_000 });
  const dockerCli = (args: string[]) => run(DOCKER_BIN, ['-H', docker!.host, ...args], { timeoutMs: 60_000 });
  const container = (service: string) => `${PROJECT}_${service}_1`;
  const inspect = async (service: string, format: string) => (await dockerCli(['inspect', '--format', format, container(service)])).trim();

  async function waitHealthy(services: string[], timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all(
        services.map((s) => inspect(s, '{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{end}}')),
      );
      if (states.every((s) => s === 'running/healthy')) return;
      if (Date.now() > deadline) {
        const logs = await compose(['logs', '--no-color', '--tail', '20']).catch((e: Error) => e.message);
        throw new Error(`not healthy after ${timeoutMs} ms: ${services.map((s, i) => `${s} ${states[i]}`).join(', ')}\n${logs}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  let rpcId = 0;
  let retried = 0;
  type RpcError = { code: number; message: string; data?: { reason?: string }[] };
  /**
   * One JSON-RPC call; an error the table marks retryable (a NATS node lost mid-request answers
   * INTERNAL) is sent again as it was — same message id, so never a second task — for up to 60 s.
   */
  async function rpc(method: string, params: unknown): Promise<any> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await fetch(`${GATEWAY}/a2a/demo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
      });
      const body = (await res.json()) as { result?: any; error?: RpcError };
      if (!body.error) return body.result;
      const reason = body.error.data?.[0]?.reason as ErrorKey | undefined;
      if (!reason || !ERRORS[reason]?.retryable || Date.now() > deadline) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
      retried++;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  const replyOf = (t: any): string => t.artifacts?.[0]?.parts?.[0]?.text ?? '';

  /** A blocking SendMessage: the task, once the gateway acknowledged it. */
  async function ask(messageId: string, text: string): Promise<{ id: string; state: string; reply: string }> {
    const t = (await rpc('SendMessage', { message: { messageId, role: 'ROLE_USER', parts: [{ text }] } })).task;
    return { id: t.id, state: t.status.state, reply: replyOf(t) };
  }

  async function getTask(id: string): Promise<{ state: string; reply: string }> {
    const t = await rpc('GetTask', { id });
    return { state: t.status.state, reply: replyOf(t) };
  }

  /** The NATS service whose node leads the ledger's stream (server names n1..n3 are nats-1..3). */
  async function ledgerLeader(): Promise<string> {
    const jsz = (await (await fetch('http://127.0.0.1:8222/jsz?streams=true')).json()) as {
      account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[];
    };
    const stream = jsz.account_details?.flatMap((a) => a.stream_detail ?? []).find((st) => st.name === `KV_${BUCKETS.tasks}`);
    const leader = /^n([123])$/.exec(stream?.cluster?.leader ?? '')?.[1];
    if (!leader) throw new Error(`no leader of KV_${BUCKETS.tasks} in /jsz: ${JSON.stringify(stream)}`);
    return `nats-${leader}`;
  }

  /** SIGKILL to the container's first process from the host: a crash, which the restart policy answers. */
  async function crash(service: string): Promise<number> {
    const restarts = Number(await inspect(service, '{{.RestartCount}}'));
    process.kill(Number(await inspect(service, '{{.State.Pid}}')), 'SIGKILL');
    return restarts;
  }

  beforeAll(async () => {
    const taken = [];
    for (const p of PORTS) if (!(await portFree(p))) taken.push(p);
    if (taken.length) throw new Error(`the compose file's fixed ports are in use on 127.0.0.1: ${taken.join(', ')}`);
    // A copy of deploy/, so make-env.sh's .env and permissions.conf stay out of the checkout.
    temp = await tempDir('shd-compose');
    cpSync(join(REPO_ROOT, 'deploy'), join(temp.path, 'deploy'), { recursive: true });
    composeDir = join(temp.path, 'deploy', 'compose');
    await run('sh', ['make-env.sh'], { cwd: composeDir, env: { SHROOMS_MACHINE: 'box' } });
    // The image is the setup's build of deploy/Dockerfile; compose would build the same file.
    await compose(['up', '-d', '--no-build']);
    await waitHealthy(SERVICES);
  });

  afterAll(async () => {
    if (composeDir) await compose(['down', '-v', '--timeout', '5']).catch(() => '');
    await temp?.remove();
  });

  it('runs every service healthy, ours as the non-root user node', async () => {
    for (const s of ['gateway', 'guard-1', 'scheduler-1', 'bridge-demo']) {
      const pid = await inspect(s, '{{.State.Pid}}');
      // The service is the init's child (init: true): its uid from the host's /proc.
      const ps = await run('ps', ['-o', 'uid=', '--ppid', pid]);
      expect(ps.trim().split('\n')).toEqual(['1000']);
    }
  });

  it('answers an ask through the gateway and reads the task back', async () => {
    const t = await ask('first', 'hello from compose');
    expect(t).toMatchObject({ id: 'demo:first', state: 'TASK_STATE_COMPLETED', reply: 'hello from compose' });
    expect(await getTask(t.id)).toEqual({ state: 'TASK_STATE_COMPLETED', reply: 'hello from compose' });
  });

  it('keeps serving with a NATS node and a guard replica killed, losing no acknowledged task', async () => {
    const acknowledged: { id: string; text: string }[] = [];
    const askSome = async (round: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const text = `${round} ${i}`;
        const t = await ask(`${round}-${i}`, text);
        acknowledged.push({ id: t.id, text });
        expect(t.state).toBe('TASK_STATE_COMPLETED');
      }
    };
    await askSome('before', 3);

    // The node that leads the ledger: its loss forces a new leader mid-traffic.
    const leader = await ledgerLeader();
    const natsRestarts = await crash(leader);
    await askSome('nats-down', 3);
    const guardRestarts = await crash('guard-1');
    await askSome('guard-down', 3);

    // Both come back by the restart policy, healthy, and the mesh still answers.
    await waitHealthy(SERVICES);
    expect(Number(await inspect(leader, '{{.RestartCount}}'))).toBeGreaterThan(natsRestarts);
    expect(Number(await inspect('guard-1', '{{.RestartCount}}'))).toBeGreaterThan(guardRestarts);
    await askSome('after', 3);

    const lost = [];
    for (const { id, text } of acknowledged) {
      const t = await getTask(id).catch(() => undefined);
      if (t?.state !== 'TASK_STATE_COMPLETED' || t.reply !== text) lost.push(id);
    }
    process.stdout.write(
      `compose: ${leader} (ledger leader) and guard-1 crashed; ${acknowledged.length} asks acknowledged, ${retried} retryable refusals resent, ${lost.length} lost\n`,
    );
    expect(acknowledged.length).toBe(12);
    expect(lost).toEqual([]);
  });
});
