/**
 * The deploy permissions (deploy/nats/gen-permissions.mjs → permissions.conf) on a real nats-server:
 * a machine's bridge credential reaches only its own machine's ledger entries, signals and
 * deliveries; the server itself refuses the rest (spec §6).
 *
 * Over 300 lines: one nats-server with the generated permissions for the file, one block per
 * credential, so every user's reach reads beside the others'.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kvm, type KV } from '@nats-io/kv';
import { createInbox, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { BUCKETS, keys, kvSubject, subjects } from '@shrooms/protocol';
import { askGuard } from '@shrooms/client';
import { AdmissionConfigSchema, openAdmission } from '@shrooms/admission';
import { createLogger, loadConfig } from '@shrooms/runtime';
import { buildScheduler, SchedulerConfigSchema } from '@shrooms/scheduler';
import { hardenBucket } from '@shrooms/ledger';
import { jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { REPO_ROOT, eventually, runTs, startNatsServer, tempDir, type NatsServerHandle, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const GENERATOR = join(REPO_ROOT, 'deploy/nats/gen-permissions.mjs');
const PASSWORDS = {
  NATS_GATEWAY_PASSWORD: 'gateway-secret',
  NATS_GUARD_PASSWORD: 'guard-secret',
  NATS_SCHEDULER_PASSWORD: 'scheduler-secret',
  NATS_BRIDGE_PASSWORD: 'laptop-bridge-secret',
  NATS_BRIDGE_PI5_PASSWORD: 'pi5-bridge-secret',
  NATS_BRIDGE_MY_BOX_PASSWORD: 'my-box-bridge-secret',
  NATS_SESSION_WEBAPP_PASSWORD: 'laptop-webapp-secret',
  NATS_BRIDGE_PI5_JIMMY_PASSWORD: 'pi5-jimmy-secret',
  NATS_ADMIN_PASSWORD: 'admin-secret',
};
const PERMISSION_VIOLATION = /Permissions Violation/;

let temp: TempDir | undefined;
let dir: string;
let server: NatsServerHandle;
let conf: string;
const open: NatsConnection[] = [];

async function login(user: string, pass: string, opts: { inboxPrefix?: string } = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, user, pass, ...opts });
  open.push(nc);
  return nc;
}
const laptopBridge = () => login('bridge', PASSWORDS.NATS_BRIDGE_PASSWORD, { inboxPrefix: subjects.bridgeInbox('laptop') });
const pi5Bridge = () => login('bridge-pi5', PASSWORDS.NATS_BRIDGE_PI5_PASSWORD, { inboxPrefix: subjects.bridgeInbox('pi5') });

beforeAll(async () => {
  temp = await tempDir('shrooms-perms');
  dir = temp.path;
  execFileSync(process.execPath, [
    GENERATOR,
    '--local',
    'laptop',
    '--machine',
    'pi5',
    '--machine',
    'my.box',
    '--session',
    'laptop/webapp',
    '--session',
    'pi5/jimmy',
    '--out',
    join(dir, 'permissions.conf'),
  ]);
  conf = await readFile(join(dir, 'permissions.conf'), 'utf8');
  await writeFile(join(dir, 'nats.conf'), 'include "permissions.conf"\n');
  Object.assign(process.env, PASSWORDS);
  // startNatsServer adds free ports and a JetStream folder on the command line, over the file's.
  server = await startNatsServer({ args: ['-c', join(dir, 'nats.conf')] });
  // The services create the buckets; bridges only bind to them.
  const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
  const tasks = await new Kvm(gateway).create(BUCKETS.tasks, { history: 1 });
  await new Kvm(gateway).create(BUCKETS.signals, { history: 1, ttl: 60_000 });
  // What the gateway does after creating them: no rollups, no purges (libs/ledger harden.ts).
  await hardenBucket(gateway, BUCKETS.tasks);
  await hardenBucket(gateway, BUCKETS.signals);
  await tasks.put(keys.task('pi5', 'jimmy', 'asked-earlier'), JSON.stringify({ v: 1 }));
});

afterAll(async () => {
  try {
    for (const nc of open) await nc.close().catch(() => {});
    await server?.stop();
  } finally {
    await temp?.remove();
  }
});

describe('the generated permissions', () => {
  it('scope each bridge user with the subjects libs/protocol builds', () => {
    for (const machine of ['laptop', 'pi5', 'my.box']) {
      expect(conf).toContain(JSON.stringify(subjects.bridgesOfMachine(machine)));
      expect(conf).toContain(JSON.stringify(`${subjects.bridgeInbox(machine)}.>`));
      expect(conf).toContain(JSON.stringify(kvSubject(BUCKETS.tasks, keys.tasksOfMachine(machine))));
      expect(conf).toContain(JSON.stringify(kvSubject(BUCKETS.signals, keys.tasksOfMachine(machine))));
    }
    expect(conf).toContain('"shrooms.bridge.my_2Ebox.>"');
  });

  it('are what the committed permissions.conf was generated from', async () => {
    const committed = await readFile(join(REPO_ROOT, 'deploy/nats/permissions.conf'), 'utf8');
    const args =
      committed
        .match(/^# {3}node deploy\/nats\/gen-permissions\.mjs (.*)$/m)?.[1]
        ?.split(' ')
        .filter(Boolean) ?? [];
    const fresh = execFileSync(process.execPath, [GENERATOR, ...args.filter((a, i) => a !== '--out' && args[i - 1] !== '--out')], {
      encoding: 'utf8',
    });
    expect(committed.replace(/ --out \S+/, '')).toBe(fresh.replace(/ --out \S+/, ''));
  });

  it('let nobody in without a password', async () => {
    await expect(connect({ servers: server.url, reconnect: false })).rejects.toThrow(/Authorization/i);
    await expect(connect({ servers: server.url, user: 'bridge', pass: 'wrong', reconnect: false })).rejects.toThrow(/Authorization/i);
  });
});

describe('a bridge credential of machine laptop', () => {
  let nc: NatsConnection;
  let tasks: KV;
  beforeAll(async () => {
    nc = await laptopBridge();
    // Binding without STREAM.INFO, reading by direct get: what Ledger.bind does.
    tasks = await new Kvm(nc).open(BUCKETS.tasks, { allow_direct: true });
  });

  it("writes a task entry for its own machine's session", async () => {
    const revision = await tasks.put(keys.task('laptop', 'webapp', 'm1'), JSON.stringify({ v: 1 }));
    expect(revision).toBeGreaterThan(0);
  });

  it("cannot write a task entry for another machine's session: the server refuses", async () => {
    await expect(tasks.put(keys.task('pi5', 'jimmy', 'forged'), JSON.stringify({ v: 1 }))).rejects.toThrow(PERMISSION_VIOLATION);
    const admin = await login('admin', PASSWORDS.NATS_ADMIN_PASSWORD);
    expect(await (await new Kvm(admin).open(BUCKETS.tasks)).get(keys.task('pi5', 'jimmy', 'forged'))).toBeNull();
  });

  it('reads and watches its own keys', async () => {
    expect((await tasks.get(keys.task('laptop', 'webapp', 'm1')))?.json()).toEqual({ v: 1 });
    const seen: string[] = [];
    const watch = await tasks.watch({ key: keys.tasksOfMachine('laptop') });
    const done = (async () => {
      for await (const e of watch) {
        seen.push(e.key);
        if (e.key === keys.task('laptop', 'webapp', 'm2')) break;
      }
    })();
    await tasks.put(keys.task('laptop', 'webapp', 'm2'), JSON.stringify({ v: 1 }));
    await done;
    expect(seen).toEqual([keys.task('laptop', 'webapp', 'm1'), keys.task('laptop', 'webapp', 'm2')]);
    const listed: string[] = [];
    for await (const k of await tasks.keys(keys.tasksOfSession('laptop', 'webapp'))) listed.push(k);
    expect(listed.sort()).toEqual([keys.task('laptop', 'webapp', 'm1'), keys.task('laptop', 'webapp', 'm2')]);
  });

  it("cannot read or watch another machine's tasks", async () => {
    await expect(tasks.get(keys.task('pi5', 'jimmy', 'asked-earlier'))).rejects.toThrow(PERMISSION_VIOLATION);
    await expect(tasks.watch({ key: keys.tasksOfMachine('pi5') })).rejects.toThrow(PERMISSION_VIOLATION);
    await expect(tasks.watch()).rejects.toThrow(PERMISSION_VIOLATION);
  });

  it("receives its own sessions' deliveries and answers them", async () => {
    const sub = nc.subscribe(subjects.bridgesOfMachine('laptop'), { callback: (_e, m) => void m.respond(`got ${m.subject}`) });
    await nc.flush();
    const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
    const reply = await gateway.request(subjects.bridge('laptop', 'webapp', 'deliver'), 'task', { timeout: 5000 });
    expect(reply.string()).toBe(`got ${subjects.bridge('laptop', 'webapp', 'deliver')}`);
    sub.unsubscribe();
  });

  it('answers a request once, and not once its reply window is over', async () => {
    const { REPLY_WINDOW } = (await import(GENERATOR)) as { REPLY_WINDOW: string };
    const windowMs = Number(/^(\d+)s$/.exec(REPLY_WINDOW)?.[1]) * 1000;
    expect(windowMs).toBeGreaterThan(0);
    const refused: string[] = [];
    void (async () => {
      for await (const st of nc.status())
        if (st.type === 'error' && PERMISSION_VIOLATION.test(String(st.error))) refused.push(String(st.error));
    })();
    const received: Msg[] = [];
    const sub = nc.subscribe(subjects.bridge('laptop', 'webapp', 'control'), { callback: (_e, m) => void received.push(m) });
    await nc.flush();
    const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
    const inbox = createInbox();
    const answers: string[] = [];
    const answered = gateway.subscribe(`${inbox}.*`, { callback: (_e, m) => void answers.push(`${m.subject.slice(-1)} ${m.string()}`) });
    gateway.publish(subjects.bridge('laptop', 'webapp', 'control'), 'first', { reply: `${inbox}.1` });
    gateway.publish(subjects.bridge('laptop', 'webapp', 'control'), 'late', { reply: `${inbox}.2` });
    await gateway.flush();
    await eventually(() => received.length === 2);
    expect(received.map((m) => m.string())).toEqual(['first', 'late']);
    // Answered at once, then a second time: the first only (a reply-to subject is good for one answer).
    received[0]!.respond('one');
    received[0]!.respond('two');
    await nc.flush();
    await eventually(() => refused.length >= 1);
    // The other one, answered past the window: refused by the server, never delivered.
    await new Promise((r) => setTimeout(r, windowMs + 500));
    received[1]!.respond('too late');
    await nc.flush();
    await eventually(() => refused.length >= 2);
    await gateway.flush();
    expect(refused).toHaveLength(2);
    expect(answers).toEqual(['1 one']);
    sub.unsubscribe();
    answered.unsubscribe();
  });

  it("cannot subscribe to another machine's deliveries: the server refuses", async () => {
    const sub = nc.subscribe(subjects.bridge('pi5', 'jimmy', 'deliver'));
    const closed = await sub.closed;
    expect(closed).toBeInstanceOf(Error);
    expect((closed as Error).message).toMatch(PERMISSION_VIOLATION);
    const every = nc.subscribe('shrooms.bridge.>');
    expect(String(await every.closed)).toMatch(PERMISSION_VIOLATION);
  });

  it('cannot send a bridge any request, not even its own sessions: only the gateway may (past its rules and the guard)', async () => {
    for (const op of ['deliver', 'cancel', 'update', 'control'] as const) {
      for (const [m, sess] of [
        ['laptop', 'webapp'],
        ['pi5', 'jimmy'],
      ] as const) {
        await expect(nc.request(subjects.bridge(m, sess, op), 'task', { timeout: 5000 }), `${m}/${sess} ${op}`).rejects.toThrow(
          PERMISSION_VIOLATION,
        );
      }
    }
  });

  it("cannot listen to other clients' replies", async () => {
    const sub = nc.subscribe('_INBOX.>');
    expect(String(await sub.closed)).toMatch(PERMISSION_VIOLATION);
  });

  it("renews its own sessions' signals and reads the field, but writes no one else's", async () => {
    const field = await new Kvm(nc).create(BUCKETS.signals, { history: 1 });
    await field.put(keys.signal('laptop', 'webapp'), JSON.stringify({ state: 'idle' }));
    nc.publish(subjects.signal('laptop', 'webapp'), 'pulse');
    await expect(field.put(keys.signal('pi5', 'jimmy'), '{}')).rejects.toThrow(PERMISSION_VIOLATION);
    expect((await field.get(keys.signal('laptop', 'webapp')))?.json()).toEqual({ state: 'idle' });
  });

  it('cannot delete or reconfigure the ledger', async () => {
    const jsm = await jetstreamManager(nc);
    await expect(jsm.streams.delete(`KV_${BUCKETS.tasks}`)).rejects.toThrow(PERMISSION_VIOLATION);
    await expect(jsm.streams.purge(`KV_${BUCKETS.tasks}`)).rejects.toThrow(PERMISSION_VIOLATION);
    await expect(jsm.streams.purge(`KV_${BUCKETS.signals}`)).rejects.toThrow(PERMISSION_VIOLATION);
    const info = await (await jetstreamManager(await login('admin', PASSWORDS.NATS_ADMIN_PASSWORD))).streams.info(`KV_${BUCKETS.tasks}`);
    await expect(jsm.streams.update(`KV_${BUCKETS.tasks}`, { ...info.config, allow_rollup_hdrs: true })).rejects.toThrow(
      PERMISSION_VIOLATION,
    );
  });

  it('cannot erase the ledger or the signal field with a rollup on its own key: the stream refuses, every message stays', async () => {
    const admin = await jetstreamManager(await login('admin', PASSWORDS.NATS_ADMIN_PASSWORD));
    for (const bucket of [BUCKETS.tasks, BUCKETS.signals]) {
      const before = (await admin.streams.info(`KV_${bucket}`)).state.messages;
      expect(before, bucket).toBeGreaterThan(0);
      for (const rollup of ['all', 'sub']) {
        const h = natsHeaders();
        h.set('Nats-Rollup', rollup);
        const own = bucket === BUCKETS.tasks ? keys.task('laptop', 'webapp', 'm1') : keys.signal('laptop', 'webapp');
        const reply = await nc.request(kvSubject(bucket, own), '{}', { headers: h, timeout: 5000 });
        expect(reply.json<{ error?: { description?: string } }>().error?.description, `${bucket} ${rollup}`).toMatch(/rollup/i);
      }
      expect((await admin.streams.info(`KV_${bucket}`)).state.messages, bucket).toBe(before);
    }
    expect(
      await (
        await new Kvm(await login('admin', PASSWORDS.NATS_ADMIN_PASSWORD)).open(BUCKETS.tasks)
      ).get(keys.task('pi5', 'jimmy', 'asked-earlier')),
    ).not.toBeNull();
  });

  it("cannot touch the guard's windows or rules", async () => {
    const bridge = await laptopBridge();
    for (const key of [keys.rate('laptop', 'laptop', 'webapp'), 'laptop.webapp']) {
      for (const bucket of [BUCKETS.guard, BUCKETS.guardPolicy])
        await expect(bridge.request(kvSubject(bucket, key), '{}', { timeout: 5000 })).rejects.toThrow(PERMISSION_VIOLATION);
    }
  });

  it("cannot list other machines' keys through the ledger's stream info", async () => {
    const reply = nc.request(`$JS.API.STREAM.INFO.KV_${BUCKETS.tasks}`, JSON.stringify({ subjects_filter: '>' }), { timeout: 5000 });
    await expect(reply).rejects.toThrow(PERMISSION_VIOLATION);
  });
});

describe('a bridge credential of machine pi5', () => {
  it("can do for pi5 what laptop's cannot", async () => {
    const nc = await pi5Bridge();
    const tasks = await new Kvm(nc).open(BUCKETS.tasks, { allow_direct: true });
    await tasks.put(keys.task('pi5', 'jimmy', 'm1'), JSON.stringify({ v: 1 }));
    expect((await tasks.get(keys.task('pi5', 'jimmy', 'asked-earlier')))?.json()).toEqual({ v: 1 });
    await expect(tasks.put(keys.task('laptop', 'webapp', 'forged'), '{}')).rejects.toThrow(PERMISSION_VIOLATION);
    const own = nc.subscribe(subjects.bridge('pi5', 'jimmy', 'deliver'), { max: 1 });
    const other = nc.subscribe(subjects.bridge('laptop', 'webapp', 'deliver'));
    expect(String(await other.closed)).toMatch(PERMISSION_VIOLATION);
    const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
    gateway.publish(subjects.bridge('pi5', 'jimmy', 'deliver'), 'task');
    for await (const m of own) expect(m.string()).toBe('task');
  });
});

describe('a session credential', () => {
  // A session of the --local machine is `session-S`; of another machine `bridge-M-S`.
  const sessions = [
    { user: 'session-webapp', pass: PASSWORDS.NATS_SESSION_WEBAPP_PASSWORD, machine: 'laptop', own: 'webapp', sibling: 'other' },
    { user: 'bridge-pi5-jimmy', pass: PASSWORDS.NATS_BRIDGE_PI5_JIMMY_PASSWORD, machine: 'pi5', own: 'jimmy', sibling: 'other' },
  ];

  it("writes and receives only its own session's, not another session's of its machine", async () => {
    for (const s of sessions) {
      const nc = await login(s.user, s.pass, { inboxPrefix: subjects.bridgeInbox(s.machine, s.own) });
      const tasks = await new Kvm(nc).open(BUCKETS.tasks, { allow_direct: true });
      await tasks.put(keys.task(s.machine, s.own, 'm1'), JSON.stringify({ v: 1 }));
      await expect(tasks.put(keys.task(s.machine, s.sibling, 'forged'), '{}'), s.user).rejects.toThrow(PERMISSION_VIOLATION);
      const sibling = nc.subscribe(subjects.bridge(s.machine, s.sibling, 'deliver'));
      expect(String(await sibling.closed), s.user).toMatch(PERMISSION_VIOLATION);
      const own = nc.subscribe(subjects.bridge(s.machine, s.own, 'deliver'), { max: 1 });
      await nc.flush();
      const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
      gateway.publish(subjects.bridge(s.machine, s.own, 'deliver'), 'task');
      for await (const m of own) expect(m.string()).toBe('task');
    }
  });

  it('cannot send any bridge a request, its own session included', async () => {
    for (const s of sessions) {
      const nc = await login(s.user, s.pass, { inboxPrefix: subjects.bridgeInbox(s.machine, s.own) });
      for (const session of [s.own, s.sibling])
        for (const op of ['deliver', 'cancel', 'update', 'control'] as const)
          await expect(
            nc.request(subjects.bridge(s.machine, session, op), '{}', { timeout: 5000 }),
            `${s.user} ${session} ${op}`,
          ).rejects.toThrow(PERMISSION_VIOLATION);
    }
  });
});

describe('the service users', () => {
  // GATEWAY_GUARD=local: the gateway makes the guard's buckets if it comes first, counts in its
  // windows by compare-and-set, follows the rules and reads the signal that decides a hold.
  it('are enough for the gateway to admit in its own process', async () => {
    const bridge = await laptopBridge();
    const field = await new Kvm(bridge).create(BUCKETS.signals, { history: 1 });
    const careful = { machine: 'laptop', session: 'careful', harness: 'claude', state: 'idle', autoApprove: false };
    await field.put(keys.signal('laptop', 'careful'), JSON.stringify({ ...careful, at: new Date().toISOString(), ttlMs: 60_000 }));
    const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
    const violations: string[] = [];
    void (async () => {
      for await (const s of gateway.status())
        if (s.type === 'error' && PERMISSION_VIOLATION.test(String(s.error))) violations.push(String(s.error));
    })();
    const config = { ...AdmissionConfigSchema.parse({ GUARD_RATE_MAX: '1', GUARD_CAS_DEADLINE_MS: '15000' }), SHROOMS_REPLICAS: 1 };
    const admission = await openAdmission({ nc: gateway, log: createLogger('perm-test', 'silent'), config });
    try {
      const origin = { device: 'pi5.home', from: 'pi5/jimmy' };
      const ask = (taskId: string) =>
        admission.admit({
          machine: 'laptop',
          session: 'careful',
          taskId,
          origin,
          chain: [],
          depth: 0,
          fromAgent: true,
          agent: 'pi5/jimmy',
        });
      expect(await ask('careful:local-1')).toEqual({ admit: true, hold: false });
      expect((await ask('careful:local-2')).error?.key).toBe('LOOP_GUARD');
      expect(await admission.control({ action: 'counters.reset', device: 'pi5.home', machine: 'laptop', session: 'careful' })).toEqual({});
      await gateway.flush();
      expect(violations).toEqual([]);
    } finally {
      admission.close();
    }
  });

  it('are enough for the guard to run, read signals and answer the gateway', async () => {
    const bridge = await laptopBridge();
    const field = await new Kvm(bridge).create(BUCKETS.signals, { history: 1 });
    // A session that asks before running tools: only a signal the guard could read says so (a
    // missing one would hold the task).
    const signal = {
      machine: 'laptop',
      session: 'careful',
      harness: 'claude',
      state: 'idle',
      autoApprove: false,
      at: new Date().toISOString(),
      ttlMs: 60_000,
    };
    await field.put(keys.signal('laptop', 'careful'), JSON.stringify(signal));
    const guard = runTs('services/guard/src/main.ts', [], {
      NATS_URL: server.url,
      NATS_USER: 'guard',
      NATS_PASS: PASSWORDS.NATS_GUARD_PASSWORD,
      GUARD_CAS_DEADLINE_MS: '15000',
    });
    try {
      await guard.waitFor(/guard ready/, 60_000);
      const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
      const d = await askGuard(
        gateway,
        { machine: 'laptop', session: 'careful', taskId: 'careful:1', fromAgent: true, origin: { device: 'pi5.home', from: 'pi5/jimmy' } },
        { timeoutMs: 20_000 },
      );
      expect(d).toEqual({ admit: true, hold: false });
      expect(guard.output()).not.toMatch(PERMISSION_VIOLATION);
    } finally {
      await guard.stop();
    }
  });

  it('let the scheduler sweep what removed schedules leave in its own stream, and no other stream', async () => {
    const nc = await login('scheduler', PASSWORDS.NATS_SCHEDULER_PASSWORD);
    const config = loadConfig(SchedulerConfigSchema, { SHROOMS_MACHINE: 'laptop', LOG_LEVEL: 'silent' });
    const { store, engine } = await buildScheduler({ nc, log: createLogger('test', 'silent'), config });
    await store.kv.put('gone', '{}');
    await store.kv.delete('gone');
    expect((await store.scan()).markers.map((m) => m.key)).toContain('gone');
    // A rescan says this machine runs a scheduler, and takes the marker out.
    await engine.rescan();
    expect((await store.scan()).markers).toEqual([]);
    expect((await store.kv.get(keys.schedulerMachine('laptop')))?.json()).toMatchObject({ machine: 'laptop' });
    for (const stream of [BUCKETS.tasks, BUCKETS.signals, BUCKETS.guard].map((b) => `KV_${b}`)) {
      await expect(nc.request(`$JS.API.STREAM.PURGE.${stream}`, '{}', { timeout: 5000 }), stream).rejects.toThrow(PERMISSION_VIOLATION);
    }
  });

  it('let the gateway read a schedule from any replica or from the leader, and write none', async () => {
    // The scheduler (last test) made the bucket and says this machine runs one.
    const gateway = await login('gateway', PASSWORDS.NATS_GATEWAY_PASSWORD);
    for (const allow_direct of [true, false]) {
      const schedules = await new Kvm(gateway).open(BUCKETS.schedules, { allow_direct });
      expect((await schedules.get(keys.schedulerMachine('laptop')))?.json(), `allow_direct ${allow_direct}`).toMatchObject({
        machine: 'laptop',
      });
      await expect(schedules.put(keys.schedule('forged'), '{}')).rejects.toThrow(PERMISSION_VIOLATION);
    }
  });

  it('keep the guard out of the ledger', async () => {
    const guard = await login('guard', PASSWORDS.NATS_GUARD_PASSWORD);
    await expect(guard.request(kvSubject(BUCKETS.tasks, keys.task('laptop', 'webapp', 'x')), '{}', { timeout: 5000 })).rejects.toThrow(
      PERMISSION_VIOLATION,
    );
    const sub = guard.subscribe(subjects.bridgesOfMachine('laptop'));
    expect(String(await sub.closed)).toMatch(PERMISSION_VIOLATION);
  });
});
