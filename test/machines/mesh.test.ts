/**
 * The mesh across machines for real: four machines as network namespaces on real WireGuard
 * (wireguard-go), set up with `shrooms-agent mesh init|add|join|session` and started from the units
 * those commands wrote (test/machines/support/machines.ts). One rig for the file; the scenarios run
 * in order and each leaves the mesh whole for the next. Figures go to
 * test-output/machines/summary.json (docs/reliability.md shows a run).
 *
 * Over 300 lines: one rig of four machines for the file (the costly part); the scenarios run in
 * order on it and each leaves the mesh whole for the next.
 */
import { ERRORS, META, occurrenceMessageId } from '@shrooms/protocol';
import { REPO_ROOT, chain, eventually, rigUnavailable, useTool } from '@shrooms/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMachines, type Machines } from './support/machines.js';
import { record, writeLogs, writeSummary } from './support/summary.js';

let mx: Machines;
const unavailable = rigUnavailable();
if (unavailable) process.stderr.write(`machines: skipped — ${unavailable}\n`);
/** The laptop's own loopback: nothing else listens there. */
const FAKE_MODEL_PORT = 18080;
const OTLP_PORT = 4318;
/** The nap session's watchdog: first reminder after 2 s of quiet, the next one 4 s later. */
const NAP_FIRST_MS = 2000;
const NAP_GAP_MS = 4000;

/** Spans the receiver on nas has printed so far. */
function spans(): { service: string; traceId: string; name: string; attributes: Record<string, unknown> }[] {
  const out = mx.m('nas').processes.get('otlp')?.output() ?? '';
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

beforeAll(async () => {
  if (unavailable) return;
  mx = await startMachines(
    [
      { machine: 'homeserver', name: 'build', harness: 'echo' },
      { machine: 'pi5', name: 'echo', harness: 'echo' },
      { machine: 'pi5', name: 'counter', harness: 'echo' },
      // Each task takes a while, so tasks are open and queued when pi5 is cut off.
      { machine: 'pi5', name: 'slow', harness: 'echo', env: { ECHO_DELAY_MS: '1500' } },
      { machine: 'laptop', name: 'webapp', harness: 'echo' },
      // A worker that leaves its task open (`quiet:`) gets reminders along a short ladder (sleep scenario).
      {
        machine: 'laptop',
        name: 'nap',
        harness: 'echo',
        env: { WATCHDOG_FIRST_MS: String(NAP_FIRST_MS), WATCHDOG_LADDER_MS: `${NAP_GAP_MS},3600000` },
      },
      // A real pi session on the laptop, its model the fake model server on the laptop's loopback.
      {
        machine: 'laptop',
        name: 'pi',
        harness: 'pi',
        env: {
          SHROOMS_MODEL_BASE_URL: `http://127.0.0.1:${FAKE_MODEL_PORT}/v1`,
          SHROOMS_MODEL: 'fake-model',
          SHROOMS_MODEL_API_KEY: 'sk-fake',
        },
      },
    ],
    // Short signal decay (sleep scenario); a short task deadline so that a task whose result was lost
    // in the cut (a known gap, docs/reliability.md) ends by expiry within the test.
    {
      // Traces of every service go over the mesh to a receiver on nas.
      all: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://100.64.0.4:${OTLP_PORT}`, OTEL_BSP_SCHEDULE_DELAY: '200' },
      bridge: { BRIDGE_SIGNAL_TTL_MS: '4000' },
      gateway: { LIMIT_TASK_EXPIRY_MS: '60000', GATEWAY_EXPIRY_SWEEP_MS: '1000' },
      // A lease that runs out within the test (the schedule scenario), ticks often enough to see it.
      scheduler: { SCHEDULER_TICK_MS: '250', SCHEDULER_LEASE_MS: '6000' },
    },
    async (rig) => {
      const fake = rig
        .machine('laptop')
        .spawn('fake-model', [
          process.execPath,
          '--conditions=development',
          '--import',
          'tsx',
          join(REPO_ROOT, 'libs/testing/src/fake-model/main.ts'),
          '--port',
          String(FAKE_MODEL_PORT),
          '--quiet',
        ]);
      const otlp = rig
        .machine('nas')
        .spawn('otlp', [
          process.execPath,
          '--conditions=development',
          '--import',
          'tsx',
          join(REPO_ROOT, 'libs/testing/src/otlp/main.ts'),
          '--host',
          rig.machine('nas').address,
          '--port',
          String(OTLP_PORT),
        ]);
      await Promise.all([fake.waitFor(/LISTENING \d+/, 60_000), otlp.waitFor(/LISTENING \d+/, 60_000)]);
    },
  );
});

afterAll(async () => {
  if (unavailable) return;
  writeSummary();
  if (mx) writeLogs(mx.rig.machines);
  await mx?.stop();
});

const msg = (id: string, text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...extra },
});
const immediate = (id: string, text: string) => ({ ...msg(id, text), configuration: { returnImmediately: true } });
const isRetryable = (code: number) => Object.values(ERRORS).some((e) => e.code === code && e.retryable);

async function getTask(from: string, to: string, session: string, id: string) {
  return (await mx.rpc(from, to, `/a2a/${session}`, 'GetTask', { id })).result;
}

/**
 * Asks with a fresh message id each time until one completes; resolves with that task and how many
 * asks did not (refused, unreachable, or left open by a lost write — see docs/reliability.md).
 */
async function askUntilServed(from: string, to: string, session: string, prefix: string, timeoutMs = 120_000) {
  let attempt = 0;
  const failures: (number | string)[] = [];
  const task = await eventually(
    async () => {
      const a = await mx
        .rpc(from, to, `/a2a/${session}`, 'SendMessage', msg(`${prefix}-${attempt++}`, 'are you there?'), {}, 20_000)
        .catch((e: Error) => ({ error: { code: e.message } }));
      const state = a.result?.task?.status.state;
      if (state === 'TASK_STATE_COMPLETED') return a.result.task;
      failures.push(a.error?.code ?? state);
      return undefined;
    },
    timeoutMs,
    250,
  ).catch((err: Error) => {
    throw new Error(`${from} → ${to}/${session} not served: ${err.message}; answers: ${JSON.stringify(failures.slice(-5))}`);
  });
  return { task, failures };
}

/**
 * `shrooms-agent a2a send TO TEXT --json` run by a person on machine `from`, with the gateways map
 * `mesh join` wrote (docs/joining.md: a person's CLI needs it to reach other machines' sessions).
 */
async function askWithCli(from: string, to: string, text: string) {
  const env = readFileSync(join(mx.m(from).configDir, 'bridge.env'), 'utf8');
  const gateways = /^SHROOMS_GATEWAYS=(.*)$/m.exec(env)?.[1] ?? '';
  const startedAt = Date.now();
  const r = await mx.m(from).cli(['a2a', 'send', to, text, '--json'], { SHROOMS_GATEWAYS: gateways });
  let error: { key?: string; retryable?: boolean } | undefined;
  try {
    error = JSON.parse(r.stdout).error;
  } catch {
    error = undefined;
  }
  return { from, exit: r.code, error, stderr: `${r.stdout}\n${r.stderr}`.slice(-2000), ms: Date.now() - startedAt };
}

function outputCount(machine: string, unit: string, re: RegExp): number {
  return (mx.m(machine).processes.get(unit)?.output().match(new RegExp(re, 'g')) ?? []).length;
}

/** A unit's log lines (pino JSON) with message `msg` about schedule `id`. */
function scheduleLines(machine: string, id: string, msg: RegExp): Record<string, unknown>[] {
  return (mx.m(machine).processes.get('shrooms-scheduler')?.output() ?? '')
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes(id))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.schedule === id && msg.test(String(l.msg)));
}

let scheduleAttempts = 0;
let wholeChecks = 0;

/**
 * The mesh whole again: each machine's session served from another machine. A scenario's fault
 * (a cut, a kill) heals at its end, but a JetStream leader that moved back may still be in its
 * election when the next scenario begins, and its first ask would answer NATS_UNAVAILABLE for the
 * previous scenario's fault. Asks only sessions no scenario counts (not counter, slow, nap).
 */
async function meshWhole() {
  const n = ++wholeChecks;
  await Promise.all([
    askUntilServed('pi5', 'homeserver', 'build', `id-whole-${n}-home`),
    askUntilServed('homeserver', 'pi5', 'echo', `id-whole-${n}-pi5`),
    askUntilServed('homeserver', 'laptop', 'webapp', `id-whole-${n}-laptop`),
  ]);
}

describe.skipIf(unavailable)('across machines on WireGuard', () => {
  beforeEach(meshWhole, 360_000);

  it('a pi session on the laptop asks a session on pi5 through its MCP ask_agent and gets the answer; pi5 names the laptop from its WireGuard address', async () => {
    const done = (text: string) => useTool('task_update', { task: '$TASK', status: 'done', text });
    const script = chain(useTool('ask_agent', { to: 'pi5/echo', text: 'what does pi5 say?' }), done('pi5 said: $RESULT'));
    // A person on the home server asks the laptop's pi session (blocking until it finishes).
    const r = await mx.rpc('homeserver', 'laptop', '/a2a/pi', 'SendMessage', msg('id-pi-1', script), {}, 240_000);
    expect(r.result?.task?.status.state, JSON.stringify(r).slice(0, 2000)).toBe('TASK_STATE_COMPLETED');
    expect(r.result.task.artifacts[0].parts[0].text).toContain('what does pi5 say?');
    // The task on pi5: asked by the laptop (verified from its WireGuard address), claimed by laptop/pi.
    const list = await mx.rpc('laptop', 'pi5', '/a2a/echo', 'ListTasks', { pageSize: 100 });
    const asked = list.result.tasks.filter((t: any) => t.metadata['shrooms/from'] === 'laptop/pi');
    expect(asked).toHaveLength(1);
    expect(asked[0].metadata['shrooms/device']).toMatch(/^laptop(\.home)?$/);
    expect(asked[0].metadata['shrooms/parent']).toBe('laptop/pi:id-pi-1');
    expect(asked[0].status.state).toBe('TASK_STATE_COMPLETED');
    // One trace spans both machines: the laptop's task (its bridge) and the one it asked on pi5.
    const trace = await eventually(
      () => {
        const all = spans();
        const onLaptop = all.find((x) => x.attributes['shrooms.task_id'] === 'pi:id-pi-1' && x.service === 'shrooms-bridge');
        const onPi5 =
          onLaptop &&
          all.find(
            (x) => x.traceId === onLaptop.traceId && x.attributes['shrooms.task_id'] === asked[0].id && x.service === 'shrooms-bridge',
          );
        return onPi5 ? onLaptop.traceId : undefined;
      },
      30_000,
      200,
    );
    expect(trace).toMatch(/^[0-9a-f]{32}$/);
    record({
      name: 'a pi session on laptop asks pi5 via MCP ask_agent',
      acknowledged: 2,
      lost: 0,
      doubled: asked.length - 1,
      recoveryMs: null,
    });
  });

  it('names the asking device from its WireGuard address; forwarded-for headers change nothing', async () => {
    const r = await mx.rpc('laptop', 'pi5', '/a2a/echo', 'SendMessage', msg('id-laptop-1', 'hello pi5'));
    expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(r.result.task.metadata['shrooms/device']).toMatch(/^laptop(\.home)?$/);
    const spoofed = await mx.rpc('laptop', 'pi5', '/a2a/echo', 'SendMessage', msg('id-laptop-2', 'who am I'), {
      'x-forwarded-for': mx.m('homeserver').address,
      forwarded: `for=${mx.m('homeserver').address}`,
    });
    expect(spoofed.result.task.metadata['shrooms/device']).toMatch(/^laptop(\.home)?$/);
    const fromHome = await mx.rpc('homeserver', 'pi5', '/a2a/echo', 'SendMessage', msg('id-home-1', 'hello from home'));
    expect(fromHome.result.task.metadata['shrooms/device']).toMatch(/^homeserver(\.home)?$/);
    record({ name: 'identity: device from the WireGuard address', acknowledged: 3, lost: 0, doubled: 0, recoveryMs: null });
  });

  it('does not serve a machine that is not a WireGuard peer, on the underlay or through the tunnel', async () => {
    const stranger = mx.m('stranger');
    const pi5 = mx.m('pi5');
    // On the underlay the gateway does not listen at all (mesh address and loopback only).
    await expect(stranger.fetch(`http://${pi5.underlay}:7387/.well-known/agent-card.json`, { timeoutMs: 5_000 })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    // Through the tunnel: pi5 does not know the stranger's key, so no handshake, no packet.
    await expect(stranger.fetch(`http://${pi5.address}:7387/.well-known/agent-card.json`, { timeoutMs: 3_000 })).rejects.toThrow(
      /Timeout|abort/i,
    );
    // A WireGuard peer of pi5 whose key the mesh does not name: reaches the gateway, is refused.
    pi5.addPeer(stranger);
    try {
      const r = await mx.rpc('stranger', 'pi5', '/a2a/echo', 'SendMessage', msg('id-stranger-1', 'let me in'), {}, 10_000);
      expect(r.error).toMatchObject({ code: ERRORS.UNKNOWN_DEVICE.code });
    } finally {
      pi5.removePeer(stranger);
    }
  });

  it('refuses a peer removed with `wg set … peer … remove` within the poll interval, and serves it again once re-added', async () => {
    const pi5 = mx.m('pi5');
    const laptop = mx.m('laptop');
    const reloads = outputCount('pi5', 'shrooms-gateway', /peers map reloaded/);
    pi5.removePeer(laptop);
    const removedAt = Date.now();
    try {
      await expect(mx.rpc('laptop', 'pi5', '/a2a/echo', 'SendMessage', msg('id-removed-1', 'still there?'), {}, 3_000)).rejects.toThrow(
        /Timeout|abort/i,
      );
      // The gateway read the change from `wg show` by itself (SHROOMS_WG_POLL_MS, 1 s).
      await eventually(() => outputCount('pi5', 'shrooms-gateway', /peers map reloaded/) > reloads, 10_000, 100);
    } finally {
      pi5.addPeer(laptop);
    }
    const refusedForMs = Date.now() - removedAt;
    const back = await askUntilServed('laptop', 'pi5', 'echo', 'id-readded', 30_000);
    expect(back.task.metadata['shrooms/device']).toMatch(/^laptop/);
    record({
      name: 'identity: removed peer refused, re-added peer served',
      acknowledged: 1,
      lost: 0,
      doubled: 0,
      recoveryMs: Date.now() - removedAt - refusedForMs,
    });
  });

  // The window is one key of an R3 bucket written by compare-and-set (casPut of @shrooms/runtime).
  // pi5's gateway admits its sessions' new tasks in its own process (GATEWAY_GUARD=local, what
  // `mesh` sets up, with no guard process anywhere): with 100 at once exactly 30 get in.
  it('loop guard, admitted by the gateway over the R3 window: exactly 30 of 100 concurrent new tasks, no guard process in the mesh', async () => {
    for (const name of ['laptop', 'homeserver', 'pi5', 'nas']) expect(mx.m(name).processes.has('shrooms-guard'), name).toBe(false);
    const count = () => ({ gateway: outputCount('pi5', 'shrooms-gateway', /task refused/) });
    const before = count();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        mx.rpc('laptop', 'pi5', '/a2a/counter', 'SendMessage', immediate(`id-flood-${i}`, `n ${i}`), {}, 60_000),
      ),
    );
    const admitted = answers.filter((a) => a.result?.task);
    const refused = answers.filter((a) => a.error?.code === ERRORS.LOOP_GUARD.code);
    record({
      name: 'loop guard: 100 concurrent, admitted by the gateway',
      acknowledged: admitted.length,
      lost: Math.max(0, 30 - admitted.length),
      doubled: Math.max(0, admitted.length - 30),
      recoveryMs: null,
      notes: { expected: 30, refused: refused.length },
    });
    expect(
      admitted.length + refused.length,
      JSON.stringify(answers.filter((a) => !a.result?.task && a.error?.code !== ERRORS.LOOP_GUARD.code).slice(0, 3)),
    ).toBe(100);
    expect(admitted.length).toBe(30);
    // The gateway logs each refusal before it answers, but its output reaches this process through
    // a pipe that can trail the answers: wait for the count to arrive (a count past it never does).
    await eventually(() => count().gateway - before.gateway === refused.length, 10_000, 100);
  });

  it('sleep: the laptop stopped (SIGSTOP of every process) past the signal decay — presence fades and comes back, an ask sent meanwhile is answered once after it wakes', async () => {
    const laptop = mx.m('laptop');
    const agents = async () =>
      (await mx.m('homeserver').fetch('http://127.0.0.1:7387/agents')).json().agents.map((a: any) => `${a.machine}/${a.session}`);
    // Awake and present first: with this test's 4 s signal lifetime a JetStream stall of the shared
    // machine (renewals timing out for ~10 s) can lapse the signal of a session that has no task
    // yet, which its gateway then calls SESSION_NOT_FOUND (docs/reliability.md, what was flaky).
    await eventually(async () => (await agents()).includes('laptop/webapp'), 60_000, 250);
    const before = await mx.rpc('homeserver', 'laptop', '/a2a/webapp', 'SendMessage', msg('id-before-sleep', 'awake?'));
    expect(before.result?.task?.status.state, JSON.stringify(before)).toBe('TASK_STATE_COMPLETED');
    // A task its worker leaves open: the nap session's watchdog will remind it, once per ladder step.
    const napId = 'nap:id-nap-open';
    await mx.rpc('homeserver', 'laptop', '/a2a/nap', 'SendMessage', immediate('id-nap-open', 'quiet: still thinking'));
    const nap = () => getTask('homeserver', 'laptop', 'nap', napId);
    await eventually(async () => (await nap())?.status.state === 'TASK_STATE_WORKING' || undefined, 30_000, 100);
    const sleptAt = Date.now();
    laptop.sleep();
    let wokeAt: number;
    let during: Promise<any> | undefined;
    try {
      // Its signals decay (BRIDGE_SIGNAL_TTL_MS, 4 s here) with nobody cleaning up.
      await eventually(async () => !(await agents()).includes('laptop/webapp'), 60_000, 250);
      // An ask to the sleeping laptop: its packets wait in the tunnel's retries.
      during = mx.rpc('homeserver', 'laptop', '/a2a/webapp', 'SendMessage', msg('id-during-sleep', 'wake up'), {}, 120_000);
      // Asleep across the nap session's first reminder and the next step of its ladder as well.
      await eventually(() => Date.now() - sleptAt > NAP_FIRST_MS + NAP_GAP_MS || undefined, 60_000, 100);
    } finally {
      laptop.wake();
      wokeAt = Date.now();
    }
    const answered = await during!;
    expect(answered.result?.task?.status.state, JSON.stringify(answered)).toBe('TASK_STATE_COMPLETED');
    await eventually(async () => (await agents()).includes('laptop/webapp'), 60_000, 250);
    const recoveryMs = Date.now() - wokeAt;
    const tasks = await Promise.all(
      ['id-before-sleep', 'id-during-sleep'].map((id) => getTask('homeserver', 'laptop', 'webapp', `webapp:${id}`)),
    );
    const doubled = tasks.filter((t) => t.history.filter((h: any) => h.role === 'ROLE_AGENT').length !== 1).length;
    expect(tasks.map((t) => t.status.state)).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED']);
    expect(doubled).toBe(0);
    // Reminders after the wake: the one that fell due in the sleep, then the next only a ladder step
    // later — not one for every step the sleep spanned. Waits for the second, then reads their times.
    const reminded = await eventually(
      async () => {
        const t = await nap();
        return Number(t?.metadata?.[META.nudges] ?? 0) >= 2 ? t : undefined;
      },
      60_000,
      250,
    );
    const times = (reminded.metadata['shrooms/nudge_log'] as number[]) ?? [];
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    await mx.rpc('homeserver', 'laptop', '/a2a/nap', 'CancelTask', { id: napId });
    record({
      name: 'sleep: laptop stopped past the signal decay, then woken',
      acknowledged: 2,
      lost: 0,
      doubled,
      recoveryMs,
      notes: { sleptMs: wokeAt - sleptAt, remindersAfterWake: times.filter((t) => t >= wokeAt).length, reminderGapsMs: gaps },
    });
    expect(wokeAt - sleptAt).toBeGreaterThan(NAP_FIRST_MS + NAP_GAP_MS);
    expect(times.length).toBeGreaterThanOrEqual(2);
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(NAP_GAP_MS);
  });

  it('partition: pi5 cut off — the others keep serving each other, and after the heal nothing acknowledged is lost or doubled and the queue resumes in order', async () => {
    const pi5 = mx.m('pi5');
    const ids = ['id-cut-1', 'id-cut-2', 'id-cut-3'];
    for (const id of ids) {
      const r = await mx.rpc('laptop', 'pi5', '/a2a/slow', 'SendMessage', immediate(id, `work ${id}`));
      expect(r.result.task.id).toBe(`slow:${id}`);
    }
    pi5.cut();
    const cutAt = Date.now();
    // Meanwhile a person on each of the others asks a session on pi5 with the CLI: answered soon with
    // a retryable error (README, Errors) — GATEWAY_UNREACHABLE, or NATS_UNAVAILABLE while the local
    // gateway cannot read the sessions' signals — not left hanging and not INTERNAL.
    const asksToCut = Promise.all(['laptop', 'homeserver'].map((from) => askWithCli(from, 'pi5/echo', `from ${from} in the cut`)));
    const codesDuringCut: (number | string)[] = [];
    let notCompletedDuringCut = 0;
    let failoverMs = 0;
    let healedAt: number;
    let toCut: Awaited<typeof asksToCut>;
    try {
      // laptop and homeserver keep serving each other (the ledger has homeserver and nas: a quorum).
      // The ledger's leaders that were on pi5 move first (a raft election): until then a write may be
      // refused, so the client retries what the gateway calls retryable.
      // A task whose result write timed out while the leaders moved stays open until its deadline
      // (a known gap, docs/reliability.md): the client asks anew, so count those apart.
      for (const [from, to, session] of [
        ['laptop', 'homeserver', 'build'],
        ['homeserver', 'laptop', 'webapp'],
      ] as const) {
        let attempt = 0;
        const r = await eventually(
          async () => {
            const a = await mx
              .rpc(from, to, `/a2a/${session}`, 'SendMessage', msg(`id-during-cut-${from}-${attempt++}`, 'still here'), {}, 20_000)
              .catch((e: Error) => ({ error: { code: e.message } }));
            if (a.error) codesDuringCut.push(a.error.code);
            else if (a.result?.task?.status.state !== 'TASK_STATE_COMPLETED') notCompletedDuringCut++;
            return a.result?.task?.status.state === 'TASK_STATE_COMPLETED' ? a.result.task : undefined;
          },
          120_000,
          250,
        );
        if (!failoverMs) failoverMs = Date.now() - cutAt;
        expect(r.status.state).toBe('TASK_STATE_COMPLETED');
      }
      toCut = await asksToCut;
    } finally {
      pi5.heal();
      healedAt = Date.now();
    }
    for (const a of toCut!) {
      expect(a.exit, a.stderr).not.toBe(0);
      expect(a.error?.key, a.stderr).not.toBe('INTERNAL');
      expect(a.error?.retryable, a.stderr).toBe(true);
    }
    const back = await askUntilServed('laptop', 'pi5', 'echo', 'id-after-heal');
    const recoveryMs = Date.now() - healedAt;
    expect(back.task.status.state).toBe('TASK_STATE_COMPLETED');
    // Every acknowledged task finished, once, in the order asked.
    let states: unknown;
    const finished = await eventually(
      async () => {
        const ts = await Promise.all(ids.map((id) => getTask('laptop', 'pi5', 'slow', `slow:${id}`)));
        states = ts.map((t) => [t?.status.state, t?.metadata?.['shrooms/queued'], t?.metadata?.['shrooms/stalled']]);
        return ts.every((t) => ['TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED'].includes(t?.status.state)) ? ts : undefined;
      },
      150_000,
      500,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; tasks: ${JSON.stringify(states)}; bridge: ${mx
          .m('pi5')
          .processes.get('shrooms-bridge@slow')
          ?.output()
          .split('\n')
          .filter((l) => /"level":(40|50)/.test(l))
          .slice(-4)
          .join('\n')
          .slice(0, 3000)}`,
      );
    });
    // Finished right: completed with its own text, or — its result lost in the cut — canceled by
    // the deadline sweep (shrooms/expired). Completed ones once each, in the order asked.
    const wrong = finished.filter(
      (t) =>
        !(t.status.state === 'TASK_STATE_COMPLETED'
          ? t.artifacts?.[0]?.parts?.[0]?.text?.startsWith('work ')
          : t.metadata['shrooms/expired']),
    );
    const completed = finished.filter((t) => t.status.state === 'TASK_STATE_COMPLETED');
    const doubled = completed.filter((t) => t.history.filter((h: any) => h.role === 'ROLE_AGENT').length !== 1).length;
    const times = completed.map((t) => Date.parse(t.status.timestamp));
    expect(wrong).toEqual([]);
    expect(doubled).toBe(0);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    record({
      name: 'partition: pi5 cut off, then healed',
      acknowledged: ids.length,
      lost: wrong.length,
      doubled,
      recoveryMs,
      notes: {
        othersServingAfterMs: failoverMs,
        asksToCutMachine: toCut!.map((a) => ({ from: a.from, key: a.error?.key ?? null, answeredAfterMs: a.ms })),
        refusalsBeforeThat: codesDuringCut,
        asksLeftOpenDuringCut: notCompletedDuringCut,
        finishedByExpiry: finished.length - completed.length,
      },
    });
  });

  // Fails fast, not after ten minutes, with a retryable error of the table: the guard and the
  // ledger cannot reach a quorum from here (NATS_UNAVAILABLE or GUARD_UNAVAILABLE), never INTERNAL.
  it('partition: on the machine cut off, a new ask is answered with a retryable error, not left hanging and not INTERNAL', async () => {
    const pi5 = mx.m('pi5');
    pi5.cut();
    const cutAt = Date.now();
    try {
      // On pi5 itself a new ask gets a documented, retryable refusal — not a hang.
      const local = await pi5.fetch('http://127.0.0.1:7387/a2a/echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: msg('id-on-cut-pi5', 'alone?') }),
        timeoutMs: 60_000,
      });
      const err = local.json().error;
      record({
        name: 'partition: a new ask on the machine cut off',
        acknowledged: 0,
        lost: 0,
        doubled: 0,
        recoveryMs: null,
        notes: { code: err?.code ?? null, retryable: err ? isRetryable(err.code) : null, answeredAfterMs: Date.now() - cutAt },
      });
      expect(err, local.text).toBeDefined();
      expect(err.code, local.text).not.toBe(ERRORS.INTERNAL.code);
      expect(isRetryable(err.code), local.text).toBe(true);
    } finally {
      pi5.heal();
    }
    await askUntilServed('laptop', 'pi5', 'echo', 'id-after-local');
  });

  it('a machine killed whole (kill -9 of every process, its NATS node too) comes back from its state: the ledger intact, its sessions serving', async () => {
    const before = await mx.rpc('laptop', 'homeserver', '/a2a/build', 'SendMessage', msg('id-before-kill', 'remember me'));
    expect(before.result?.task?.status.state, JSON.stringify(before)).toBe('TASK_STATE_COMPLETED');
    await mx.m('homeserver').killAll();
    // While it is down the R3 ledger keeps its quorum (pi5 and nas): the others serve.
    const meanwhile = await askUntilServed('laptop', 'pi5', 'echo', 'id-while-home-down');
    expect(meanwhile.task.status.state).toBe('TASK_STATE_COMPLETED');
    const bootAt = Date.now();
    await mx.boot('homeserver');
    const after = await askUntilServed('laptop', 'homeserver', 'build', 'id-after-restart');
    const recoveryMs = Date.now() - bootAt;
    expect(after.task.status.state).toBe('TASK_STATE_COMPLETED');
    const kept = await getTask('laptop', 'homeserver', 'build', 'build:id-before-kill');
    expect(kept?.status.state).toBe('TASK_STATE_COMPLETED');
    record({
      name: 'machine killed whole and restarted',
      acknowledged: 1,
      lost: kept ? 0 : 1,
      doubled: 0,
      recoveryMs,
      notes: { othersWhileDownUnserved: meanwhile.failures.length, unservedAfterBoot: after.failures.length },
    });
  });

  // Once flaky (3 of 8 fresh runs; docs/reliability.md, Machines: what was flaky): the replica
  // taking over resent only after a doubling backoff and after each tick had waited out a rescan
  // JetStream did not answer. The scheduler now follows the gateway's Retry-After and rescans beside
  // its ticks.
  it('a schedule fires exactly once with scheduler replicas on two machines while the machine holding its lease is cut off at fire time', async () => {
    const replicas = ['homeserver', 'pi5'];
    // Asked again while the mesh answers a retryable error (a machine restarted just before); a fresh
    // message id each time, so a retry of this test, too, makes a new schedule.
    let at = '';
    let created: any;
    await eventually(
      async () => {
        at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 4000).toISOString();
        const ask = msg(`id-schedule-cut-${++scheduleAttempts}`, 'at fire time', { metadata: { [META.at]: at } });
        created = await mx.rpc('homeserver', 'laptop', '/a2a/webapp', 'SendMessage', ask);
        return created.result || !isRetryable(created.error?.code) || undefined;
      },
      60_000,
      250,
    ).catch(() => undefined);
    const id = created.result?.task?.metadata?.[META.schedule] as string;
    expect(id, JSON.stringify(created)).toBeTruthy();
    // The recipient's gateway is slow to answer (stopped), so the replica that claims the occurrence
    // still holds its lease, mid-send, when its machine is cut off.
    const recipientGateway = mx.m('laptop').processes.get('shrooms-gateway')!.child;
    recipientGateway.kill('SIGSTOP');
    let holder: string;
    let cutAt: number;
    try {
      holder = await eventually(() => replicas.find((m) => scheduleLines(m, id, /^occurrence claimed$/).length > 0), 60_000, 50);
      mx.m(holder).cut();
      cutAt = Date.now();
    } finally {
      recipientGateway.kill('SIGCONT');
    }
    const other = replicas.find((m) => m !== holder)!;
    let takeoverMs: number;
    try {
      // The other replica waits for the lease to run out, then claims, sends and moves the schedule on.
      await eventually(
        () => scheduleLines(other, id, /^occurrence fired$/).some((l) => l.advanced === true) || undefined,
        120_000,
        100,
      ).catch((err: Error) => {
        throw new Error(
          `${other} did not take over from ${holder}: ${err.message}; ${other}: ${JSON.stringify(scheduleLines(other, id, /./).map((l) => [l.time, l.msg, l.error ?? l.err]))}`,
        );
      });
      takeoverMs = Date.now() - cutAt;
    } finally {
      mx.m(holder).heal();
    }
    const healedAt = Date.now();
    // The holder, back, ends its own attempt: answered (the same task), or not taken and left to the other.
    await eventually(
      () =>
        scheduleLines(holder, id, /^(occurrence fired|occurrence not taken yet; will retry|could not record the send)/).length > 0 ||
        undefined,
      120_000,
      100,
    );
    const holderDoneAt = Date.now();
    const taskId = `webapp:${occurrenceMessageId(id, at)}`;
    const task = await eventually(
      async () => {
        const t = await getTask('homeserver', 'laptop', 'webapp', taskId);
        return t?.status.state === 'TASK_STATE_COMPLETED' ? t : undefined;
      },
      60_000,
      250,
    );
    // Every task of the laptop's session that names the schedule (a second one would be a double):
    // all pages (the session holds more than one page by now), once the listing — the laptop
    // gateway's index, which catches up after its SIGSTOP — shows the task GetTask already read.
    let listed: any;
    const listAll = async (): Promise<any[] | undefined> => {
      const all: any[] = [];
      let pageToken: string | undefined;
      do {
        listed = await mx.rpc('homeserver', 'laptop', '/a2a/webapp', 'ListTasks', { pageSize: 100, ...(pageToken ? { pageToken } : {}) });
        if (!listed.result?.tasks) return undefined;
        all.push(...listed.result.tasks);
        pageToken = listed.result.nextPageToken || undefined;
      } while (pageToken);
      return all.some((t) => t.id === taskId) ? all : undefined;
    };
    const tasks: any[] = await eventually(listAll, 30_000, 250).catch((err: Error) => {
      throw new Error(`ListTasks on laptop/webapp never showed ${taskId}: ${err.message}; last answer ${JSON.stringify(listed)}`);
    });
    const fromSchedule = tasks.filter((t) => t.metadata?.[META.schedule] === id && t.id !== created.result.task.id);
    const advancedBy = replicas.flatMap((m) =>
      scheduleLines(m, id, /^occurrence fired$/)
        .filter((l) => l.advanced === true)
        .map(() => m),
    );
    const agentTurns = task.history.filter((h: any) => h.role === 'ROLE_AGENT').length;
    record({
      name: 'schedule: replicas on two machines, the lease holder cut off at fire time',
      acknowledged: 1,
      lost: fromSchedule.length === 0 ? 1 : 0,
      doubled: Math.max(0, fromSchedule.length - 1) + Math.max(0, agentTurns - 1),
      // The fault's end here is the takeover: from the cut until the other replica fired the occurrence.
      recoveryMs: takeoverMs!,
      notes: { leaseHolder: holder, firedBy: advancedBy, holderDoneAfterHealMs: holderDoneAt - healedAt },
    });
    expect(fromSchedule.map((t: any) => t.id)).toEqual([taskId]);
    expect(agentTurns).toBe(1);
    // Moved on exactly once, by the replica that was not cut off.
    expect(advancedBy).toEqual([other]);
  });
});
