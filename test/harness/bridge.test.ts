/**
 * Real sessions behind the bridge (spec §5, §7, §10): the real `claude` and `pi` CLIs, driven by
 * their bridges, against the fake model server — tasks finished, blocked and answered, cancelled
 * mid-turn, survived a kill -9 of the harness; a Claude Code permission prompt answered over A2A;
 * Claude asking pi through ask_agent; the watchdog's ladder; one trace across a chain A → B → C;
 * the command line inside a session, with none of its bridge's NATS login.
 *
 * Over 300 lines: one mesh of real Claude Code and pi sessions for the file (each costs seconds to
 * start); every case below runs on it.
 */
import { join } from 'node:path';
import { blockedThenAnswered, done, permissivePolicy, sessionRpc } from './helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  CLI,
  chain,
  eventually,
  childProcesses,
  nest,
  rpc,
  runTs,
  startFakeModel,
  startMesh,
  startNatsServer,
  startOtlpReceiver,
  tempDir,
  useTool,
  type FakeModel,
  type Mesh,
  type NatsServerHandle,
  type OtlpReceiver,
  type TempDir,
} from '@shrooms/testing';

let fake: FakeModel;
let otlp: OtlpReceiver;
let mesh: Mesh;
let nats: NatsServerHandle;
let nc: NatsConnection;
/** The policy file and pi's HOME: removed after every process that uses them has stopped. */
let dir: TempDir | undefined;
/** pi2's bridge logs in with this password (in NATS_PASS and in its NATS_URL); the server takes any. */
const BRIDGE_PASSWORD = `pw-${process.pid}-7c1e`;
/** pi2's bridge exports its traces with this token in OTEL_EXPORTER_OTLP_HEADERS: its agent must not see it. */
const OTEL_TOKEN = `otel-${process.pid}-4b2d`;
const notes: { subject: string; data: any }[] = [];
/** A prompt with FLAKY gets `fails` HTTP 500s, then waits for `gate` before its planned answer. */
let flaky: { fails: number; gate: Promise<void> } | undefined;

beforeAll(async () => {
  fake = await startFakeModel({
    slow: { chunks: 8, delayMs: 500 },
    async respond(ctx) {
      if (!flaky || !ctx.conversation.prompt.includes('FLAKY')) return undefined;
      if (flaky.fails > 0) return (flaky.fails--, { kind: 'fail', status: 500 });
      await flaky.gate;
      return undefined;
    },
  });
  otlp = await startOtlpReceiver();
  dir = await tempDir('bridge-harness');
  const policy = await permissivePolicy(dir.path);
  const claude = { SHROOMS_MODEL_BASE_URL: fake.url, SHROOMS_MODEL_API_KEY: 'sk-fake', CLAUDE_CODE_MAX_RETRIES: '0' };
  const pi = {
    SHROOMS_MODEL_BASE_URL: `${fake.url}/v1`,
    SHROOMS_MODEL: 'fake-model',
    SHROOMS_MODEL_API_KEY: 'sk-fake',
    HOME: join(dir.path, 'home'),
  };
  nats = await startNatsServer();
  const login = {
    NATS_URL: nats.url.replace('nats://', `nats://session-pi2:${BRIDGE_PASSWORD}@`),
    NATS_USER: 'session-pi2',
    NATS_PASS: BRIDGE_PASSWORD,
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${OTEL_TOKEN}`,
  };
  mesh = await startMesh({
    nats,
    guard: true,
    env: { GUARD_POLICY_FILE: policy, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '200' },
    sessions: [
      { name: 'cc', harness: 'claude', env: claude },
      { name: 'ccr', harness: 'claude', env: { ...claude, CLAUDE_CODE_MAX_RETRIES: '2' } },
      { name: 'pi', harness: 'pi', env: pi },
      { name: 'pi2', harness: 'pi', env: { ...pi, ...login } },
      { name: 'kid', harness: 'echo' },
      {
        name: 'dozy',
        harness: 'pi',
        env: { ...pi, WATCHDOG_FIRST_MS: '1500', WATCHDOG_LADDER_MS: '1000,1000,1000,1000,1000', WATCHDOG_TICK_MS: '100' },
      },
    ],
  });
  nc = await connect({ servers: mesh.nats.url });
  const sub = nc.subscribe('shrooms.notify.>');
  void (async () => {
    for await (const m of sub) notes.push({ subject: m.subject, data: m.json() });
  })();
  await nc.flush(); // the subscription is at nats-server before any note can be sent
}, 240_000);

afterAll(async () => {
  try {
    await nc?.close();
    await mesh?.stop();
    await nats?.stop();
    await otlp?.close();
    await fake?.close();
  } finally {
    await dir?.remove();
  }
});

const { url, ask, get, until } = sessionRpc(() => mesh.gatewayUrl);

describe.each([['cc'], ['pi']])('the %s session', (session) => {
  it('finishes a task when its model calls task_update done', async () => {
    const r = await ask(session, `${session}-done`, done('all green'), {}, false);
    expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(r.result.task.artifacts[0].parts[0].text).toBe('all green');
  });

  it('blocks, takes the answer carrying the taskId, then completes', () => blockedThenAnswered(ask, session));

  it("keeps each task's last worker line to what was said in that task: two askers never see each other's", async () => {
    // After finishing A the model says a line quoting A's id; B is finished before the model says anything.
    const a = await ask(session, `${session}-line-a`, done('for the first asker'), {}, false);
    const b = await ask(session, `${session}-line-b`, done('for the second asker'), {}, false);
    expect(b.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const seenByB = await get(session, b.result.task.id);
    const seenByA = await get(session, a.result.task.id);
    expect(String(seenByB.metadata['shrooms/last_worker_line'] ?? '')).not.toContain(`${session}-line-a`);
    expect(String(seenByA.metadata['shrooms/last_worker_line'] ?? '')).not.toContain(`${session}-line-b`);
    // What the session said after finishing A (quoting A) was said; it just is nobody else's last line.
    expect(fake.requests.some((r) => r.conversation.prompt.includes(`${session}-line-a`))).toBe(true);
  });

  it('cancels mid-turn and stays usable', async () => {
    const t = (await ask(session, `${session}-slow`, 'SLOW tell me a long story')).result.task;
    await until(session, t.id, (x) => x.status.state === 'TASK_STATE_WORKING');
    await fake.waitForRequest((r) => r.conversation.prompt.includes('tell me a long story'), 60_000);
    const c = await rpc(url(session), 'CancelTask', { id: t.id });
    expect(c.result.status.state).toBe('TASK_STATE_CANCELED');
    const next = await ask(session, `${session}-after-cancel`, done('still here'), {}, false);
    expect(next.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('survives kill -9 of the harness mid-task: delivered again once, then the next task works', async () => {
    const t = (await ask(session, `${session}-killed`, `SLOW ${done('made it')}`)).result.task;
    await until(session, t.id, (x) => x.status.state === 'TASK_STATE_WORKING');
    await fake.waitForRequest((r) => r.conversation.prompt.includes('made it') && r.conversation.prompt.includes(t.id), 60_000);
    const bridgePid = mesh.bridges.get(session)!.child.pid!;
    const children = await childProcesses(bridgePid);
    expect(children.length).toBeGreaterThan(0);
    for (const { pid } of children) process.kill(pid, 'SIGKILL');
    const finished = await until(session, t.id, (x) => x.status.state === 'TASK_STATE_COMPLETED', 180_000);
    expect(finished.metadata['shrooms/redeliveries']).toBe(1);
    const next = await ask(session, `${session}-after-kill`, done('next works'), {}, false);
    expect(next.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('model trouble', () => {
  it('shows on the task that the model endpoint answers 500 while Claude Code retries, and logs it at warn', async () => {
    let open!: () => void;
    flaky = { fails: 1, gate: new Promise<void>((r) => (open = r)) };
    const t = (await ask('ccr', 'ccr-flaky', `FLAKY ${done('made it after all')}`)).result.task;
    const noted = await until('ccr', t.id, (x) => x.status.state === 'TASK_STATE_WORKING' && !!x.status.message);
    expect(noted.status.message.parts[0].text).toBe('the model endpoint answers 500; retrying (attempt 1 of 2)');
    await mesh.bridges.get('ccr')!.waitFor(/"level":40[^\n]*the model endpoint answers 500; retrying/);
    open();
    const finished = await until('ccr', t.id, (x) => x.status.state === 'TASK_STATE_COMPLETED');
    expect(finished.artifacts[0].parts[0].text).toBe('made it after all');
    flaky = undefined;
  });

  it("fails the task with the endpoint's error when the retries run out, and logs it at warn", async () => {
    const t = (await ask('ccr', 'ccr-fail', 'this will FAIL')).result.task;
    const failed = await until('ccr', t.id, (x) => x.status.state === 'TASK_STATE_FAILED');
    expect(failed.status.message.parts[0].text).toMatch(/^the session's turn failed: API Error: 500/);
    await mesh.bridges.get('ccr')!.waitFor(/"level":40[^\n]*the session's turn failed/);
  });
});

describe('the command line inside a session', () => {
  it("runs the note's `shrooms-agent a2a …` from pi's own bash tool: on its PATH, asking as the session, with none of the bridge's secrets", async () => {
    const note = 'finished from the shell';
    // The shell prints its whole environment, then finishes the task with the CLI.
    const script = useTool('bash', { command: `env; shrooms-agent a2a update $TASK done "${note}"` });
    const r = await ask('pi2', 'pi2-shell', script, {}, false);
    expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(r.result.task.artifacts[0].parts[0].text).toBe(note);
    // The tool result the model got is the shell's own output: its environment, then the CLI's.
    const answered = await fake.waitForRequest(
      (x) => x.conversation.prompt.includes('pi2-shell') && x.entries.some((e) => e.kind === 'toolResult'),
      60_000,
    );
    const output = answered.entries
      .filter((e) => e.kind === 'toolResult')
      .map((e) => e.text)
      .join('\n');
    expect(output).toContain(`${mesh.machine}/pi2:pi2-shell completed`);
    expect(output).toMatch(new RegExp(`^SHROOMS_AGENT_SESSION=${mesh.machine}/pi2$`, 'm'));
    expect(output).toMatch(/^SHROOMS_GATEWAY_URL=http:/m);
    // The bridge logged in with a password and exports with a token; the session and its commands
    // have neither, nor any of the bridge's own settings — but the rest of its environment.
    expect(output).not.toContain(BRIDGE_PASSWORD);
    expect(output).not.toMatch(/^NATS_/m);
    expect(output).not.toContain(OTEL_TOKEN);
    expect(output).not.toMatch(/^(OTEL_EXPORTER_OTLP_HEADERS|BRIDGE_[A-Z_]+)=/m);
    expect(output).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT=http:/m);
    expect(output).toMatch(/^SHROOMS_MCP_URL=http:\/\/127\.0\.0\.1:/m);
  });
});

describe('the cancel cascade', () => {
  it('cancels the open tasks a worker asked when its own task is canceled, saying why on each', async () => {
    const t = (await ask('pi', 'pi-parent', useTool('ask_agent', { to: 'kid', text: 'quiet: keep going' }))).result.task;
    const asked = await until(
      'pi',
      t.id,
      (x) => Array.isArray(x.metadata['shrooms/children']) && x.metadata['shrooms/children'].length > 0,
    );
    const childName: string = asked.metadata['shrooms/children'][0];
    expect(childName).toMatch(new RegExp(`^${mesh.machine}/kid:mcp-`));
    const childId = childName.slice(mesh.machine.length + 1);
    await until('kid', childId, (x) => x.status.state === 'TASK_STATE_WORKING');
    const c = await rpc(url('pi'), 'CancelTask', { id: t.id });
    expect(c.result.status.state).toBe('TASK_STATE_CANCELED');
    const child = await until('kid', childId, (x) => x.status.state === 'TASK_STATE_CANCELED');
    expect(child.metadata['shrooms/cancel_reason']).toBe(`its parent ${mesh.machine}/${t.id} was canceled`);
    expect(child.metadata['shrooms/canceled_by']).toBe(`${mesh.machine} (${mesh.machine}/pi)`);
    expect(child.metadata['shrooms/parent']).toBe(`${mesh.machine}/${t.id}`);
  });
});

describe('Claude Code asking pi', () => {
  it('relays the permission prompt as INPUT_REQUIRED, and on "allow" gets pi\'s answer as its tool result', async () => {
    const script = chain(useTool('ask_agent', { to: 'pi', text: nest(done('pi did it')) }), done('cc got: $RESULT'));
    const t = (await ask('cc', 'cc-asks-pi', script)).result.task;
    const waiting = await until('cc', t.id, (x) => x.status.state === 'TASK_STATE_INPUT_REQUIRED');
    expect(waiting.metadata['shrooms/permission'].tool).toContain('ask_agent');
    expect(waiting.status.message.parts[0].text).toMatch(/permission needed/);
    // Anything but exactly allow or deny is no answer: the prompt is asked again, nothing runs.
    const loose = await ask('cc', 'cc-go-away', 'go away', { taskId: t.id });
    expect(loose.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(loose.result.task.status.message.parts[0].text).toMatch(/not an answer: reply exactly "allow" or "deny"\. permission needed/);
    expect(loose.result.task.metadata['shrooms/permission'].tool).toContain('ask_agent');
    const a = await ask('cc', 'cc-allow', 'allow', { taskId: t.id });
    expect(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']).toContain(a.result.task.status.state);
    const finished = await until('cc', t.id, (x) => x.status.state === 'TASK_STATE_COMPLETED', 180_000);
    expect(finished.artifacts[0].parts[0].text).toContain('pi did it');
    // The answer, who gave it and when are on the task.
    expect(finished.metadata['shrooms/permission_answer']).toMatchObject({ answer: 'allow', by: mesh.machine });
    expect(Date.parse(finished.metadata['shrooms/permission_answer'].at)).toBeGreaterThan(0);
    // The task pi worked on names its parent and the asker.
    const piTasks = (await rpc(url('pi'), 'ListTasks', { pageSize: 50 })).result.tasks;
    const child = piTasks.find((x: any) => x.metadata['shrooms/parent'] === `${mesh.machine}/${t.id}`);
    expect(child.metadata['shrooms/from']).toBe(`${mesh.machine}/cc`);
    expect(child.metadata['shrooms/depth']).toBe(1);
  });
});

describe('the watchdog with a real session', () => {
  it('reminds along the ladder with the request and last words, then stalls and notifies', async () => {
    const t = (await ask('dozy', 'dozy-1', 'think about the roadmap')).result.task;
    const stalled = await until('dozy', t.id, (x) => !!x.metadata['shrooms/stalled'], 180_000);
    expect(stalled.status.state).toBe('TASK_STATE_WORKING');
    // Meanwhile the task says why it waits (its turns ended without task_update).
    expect(stalled.status.message.parts[0].text).toBe(
      "the session's turn ended without task_update; the task stays open and the session is reminded after 2 s of quiet",
    );
    expect(stalled.metadata['shrooms/nudges']).toBe(6);
    const reminders = fake.requests.map((r) => r.conversation.prompt).filter((p) => p.startsWith('[shrooms reminder]') && p.includes(t.id));
    expect(reminders).toHaveLength(6);
    reminders.forEach((p, i) => {
      expect(p).toContain(`reminder ${i + 1} of 6`);
      expect(p).toContain('think about the roadmap');
      expect(p).toMatch(/your last words: "FAKE_REPLY/);
    });
    await eventually(() => notes.some((n) => n.subject.endsWith('.dozy.stalled') && n.data.taskId === t.id));
  });
});

describe('one trace per ask chain', () => {
  it('puts a CLI ask to A, A asking B and B asking C into one trace, nested as the chain', async () => {
    const forC = done('C did it');
    const forB = chain(useTool('ask_agent', { to: 'cc', text: nest(forC) }), done('B: $RESULT'));
    const forA = chain(useTool('ask_agent', { to: 'pi2', text: nest(forB) }), done('A: $RESULT'));
    const cli = runTs(CLI, ['a2a', 'send', 'pi', forA, '--wait', '--json'], {
      ...mesh.env,
      SHROOMS_GATEWAY_URL: mesh.gatewayUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    });
    const code = await new Promise<number | null>((r) => cli.child.once('exit', r));
    expect(code, cli.output()).toBe(0);
    const out = JSON.parse(cli.output().slice(cli.output().indexOf('{')));
    expect(out.state).toBe('TASK_STATE_COMPLETED');
    expect(out.reply).toContain('C did it');
    const aId = String(out.task).split('/').pop();
    const spans = await eventually(() => {
      const a = otlp.spans.find((s) => s.name === 'task' && s.attributes['shrooms.task_id'] === aId);
      if (!a) return undefined;
      const inTrace = otlp.spans.filter((s) => s.traceId === a.traceId);
      const tasks = inTrace.filter((s) => s.name === 'task');
      return tasks.length >= 3 ? inTrace : undefined;
    }, 60_000);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const tasks = spans
      .filter((s) => s.name === 'task')
      .sort((x, y) => Number(x.attributes['shrooms.depth']) - Number(y.attributes['shrooms.depth']));
    expect(tasks.map((s) => s.attributes['shrooms.depth'])).toEqual([0, 1, 2]);
    expect(tasks.map((s) => s.attributes['shrooms.session'])).toEqual([`${mesh.machine}/pi`, `${mesh.machine}/pi2`, `${mesh.machine}/cc`]);
    const ancestorsOf = (s: (typeof spans)[number]) => {
      const out: string[] = [];
      for (let p = byId.get(s.parentSpanId ?? ''); p; p = byId.get(p.parentSpanId ?? '')) out.push(p.spanId);
      return out;
    };
    expect(ancestorsOf(tasks[1]!)).toContain(tasks[0]!.spanId);
    expect(ancestorsOf(tasks[2]!)).toContain(tasks[1]!.spanId);
    for (const s of spans) {
      const parent = byId.get(s.parentSpanId ?? '');
      if (parent) expect(s.startNs >= parent.startNs).toBe(true);
    }
    expect(tasks[2]!.endNs <= tasks[1]!.endNs && tasks[1]!.endNs <= tasks[0]!.endNs).toBe(true);
  });
});
