/**
 * The watchdog with the ladder in fractions of a second (echo harness; the real harnesses have
 * their own tests): a worker that goes quiet with a task open is reminded along the ladder, the
 * hourly cap holds, then the task stalls, the owner is notified, and the next task runs; a stalled
 * task stays set aside when its bridge restarts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { eventually, rpc, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;
let nc: NatsConnection;
const AGAIN = { WATCHDOG_FIRST_MS: '200', WATCHDOG_LADDER_MS: '200', WATCHDOG_TICK_MS: '50' };
const notes: { kind: string; data: any }[] = [];

beforeAll(async () => {
  mesh = await startMesh({
    sessions: [
      { name: 'dozy', env: { WATCHDOG_FIRST_MS: '400', WATCHDOG_LADDER_MS: '300,300,300,300,300', WATCHDOG_TICK_MS: '50' } },
      { name: 'tidy', env: { WATCHDOG_FIRST_MS: '200', WATCHDOG_LADDER_MS: '100', WATCHDOG_TICK_MS: '50' } },
      { name: 'again', env: AGAIN },
      {
        name: 'capped',
        env: { WATCHDOG_FIRST_MS: '300', WATCHDOG_LADDER_MS: '200,200,200,200,200', WATCHDOG_TICK_MS: '50', WATCHDOG_MAX_PER_HOUR: '2' },
      },
    ],
  });
  nc = await connect({ servers: mesh.nats.url });
  const sub = nc.subscribe('shrooms.notify.>');
  void (async () => {
    for await (const m of sub) notes.push({ kind: m.subject.split('.').slice(2).join('.'), data: m.json() });
  })();
  await nc.flush(); // the subscription is at nats-server before any note can be sent
});
afterAll(async () => {
  await nc?.close();
  await mesh?.stop();
});

const send = (session: string, id: string, text: string) =>
  rpc(`${mesh.gatewayUrl}/a2a/${session}`, 'SendMessage', {
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text }] },
    configuration: { returnImmediately: true },
  });

it('reminds along the ladder, stalls the task, notifies the owner and frees the session', async () => {
  const t = (await send('dozy', 'd1', 'quiet: I stopped halfway')).result.task;
  const next = (await send('dozy', 'd2', 'the next one')).result.task;
  const stalled = await eventually(async () => {
    const cur = (await rpc(`${mesh.gatewayUrl}/a2a/dozy`, 'GetTask', { id: t.id })).result;
    return cur.metadata['shrooms/stalled'] ? cur : undefined;
  }, 30_000);
  expect(stalled.status.state).toBe('TASK_STATE_WORKING');
  expect(stalled.metadata['shrooms/nudges']).toBe(6);
  // The task reads stalled before its notices may have reached us: the stall's notice comes after
  // every reminder's (one publisher, in order), so wait for it, then read them.
  await eventually(() => notes.some((n) => n.kind === `${mesh.machine}.dozy.stalled` && n.data.taskId === t.id));
  const reminders = notes.filter((n) => n.kind === `${mesh.machine}.dozy.reminder`);
  expect(reminders.map((r) => r.data.nudge)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(reminders[0].data.text).toContain('I stopped halfway');
  expect(reminders[0].data.text).toContain(t.id);
  // The session takes the next task; the stalled one stays open.
  await eventually(
    async () => (await rpc(`${mesh.gatewayUrl}/a2a/dozy`, 'GetTask', { id: next.id })).result.status.state === 'TASK_STATE_COMPLETED',
    30_000,
  );
});

it('holds the hourly cap of reminders', async () => {
  const t = (await send('capped', 'c1', 'quiet: thinking')).result.task;
  await eventually(
    async () => (await rpc(`${mesh.gatewayUrl}/a2a/capped`, 'GetTask', { id: t.id })).result.metadata['shrooms/nudges'] === 2,
    30_000,
  );
  // The third reminder fell due and the cap held it (the watchdog says so once, in place of sending
  // it): no third reminder, and so no stall, inside the hour.
  await mesh.bridges.get('capped')!.waitFor(new RegExp(`"taskId":"${t.id}"[^\\n]*reminder held by the hourly cap`), 30_000);
  const cur = (await rpc(`${mesh.gatewayUrl}/a2a/capped`, 'GetTask', { id: t.id })).result;
  expect(cur.metadata['shrooms/nudges']).toBe(2);
  expect(cur.metadata['shrooms/stalled']).toBeUndefined();
});

it('never wakes a session with no open task', async () => {
  const t = (await send('tidy', 't1', 'all done at once')).result.task;
  await eventually(
    async () => (await rpc(`${mesh.gatewayUrl}/a2a/tidy`, 'GetTask', { id: t.id })).result.status.state === 'TASK_STATE_COMPLETED',
  );
  // A task that goes quiet after it: its first reminder comes no sooner than one for `t` would have.
  const quiet = (await send('tidy', 't2', 'quiet: after the tidy one')).result.task;
  await eventually(() => notes.some((n) => n.kind === `${mesh.machine}.tidy.reminder` && n.data.taskId === quiet.id), 30_000);
  expect(notes.filter((n) => n.kind.startsWith(`${mesh.machine}.tidy.`) && n.data.taskId !== quiet.id)).toEqual([]);
});

it('leaves a stalled task set aside when its bridge restarts: the session takes new tasks', async () => {
  const url = `${mesh.gatewayUrl}/a2a/again`;
  const t = (await send('again', 'a1', 'quiet: gone quiet before the restart')).result.task;
  await eventually(async () => (await rpc(url, 'GetTask', { id: t.id })).result.metadata['shrooms/stalled'], 30_000);
  await mesh.bridges.get('again')!.kill();
  await mesh.startBridge('again', 'echo', AGAIN);
  // Delivered again, the stalled task would take the session (and go quiet there for good).
  const next = (await send('again', 'a2', 'after the restart')).result.task;
  await eventually(async () => (await rpc(url, 'GetTask', { id: next.id })).result.status.state === 'TASK_STATE_COMPLETED', 30_000);
  const stalled = (await rpc(url, 'GetTask', { id: t.id })).result;
  expect(stalled.status.state).toBe('TASK_STATE_WORKING');
  expect(stalled.metadata['shrooms/stalled']).toBeDefined();
  expect(stalled.metadata['shrooms/redeliveries']).toBeUndefined();
});
