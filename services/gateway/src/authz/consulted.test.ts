/**
 * Every door asks the one rules table (rules.ts): with an action's rule turned to refuse, each door
 * of that action answers ACTION_FORBIDDEN naming it — A2A reads and sends on both bindings, the
 * cards and /agents, the dashboard's reads — and the dashboard's actions follow the same rules as
 * the A2A surface from another device's point of view. Real nats-server, ledger and gateway.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger, SignalField, transitions } from '@shrooms/ledger';
import { createLogger, loadConfig } from '@shrooms/runtime';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { buildApp, type Gateway } from '../app.js';
import { GatewayConfigSchema } from '../config.js';
import type { Identify } from '../a2a/caller.js';
import { RULES, type Action } from './rules.js';

const PHONE = '10.9.0.2';
let nats: NatsWithConnection;
let nc: NatsConnection;
let ledger: Ledger;
let gw: Gateway;

const identify: Identify = (addr) =>
  /^(127\.|::1$|::ffff:127\.)/.test(addr)
    ? { device: 'box', name: 'box', self: true }
    : addr === PHONE || addr === `::ffff:${PHONE}`
      ? { device: 'phone.home', name: 'phone', self: false }
      : undefined;

function seed(id: string, device: string, metadata: Record<string, unknown> = {}) {
  const entry = transitions.newTask({
    id: `s:${id}`,
    contextId: `ctx-${id}`,
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text: `task ${id}` }] },
    metadata: { 'shrooms/device': device, ...metadata },
    queued: false,
    now: new Date(),
  });
  return ledger.create(ledger.key('box', 's', id), entry);
}

beforeAll(async () => {
  nats = await startNatsWithConnection();
  nc = nats.nc;
  ledger = await Ledger.open(nc);
  const signals = await SignalField.open(nc);
  await seed('laptops', 'laptop.home');
  await seed('phones', 'phone.home');
  await seed('held', 'laptop.home', { 'shrooms/held': true });
  const config = loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', GATEWAY_GUARD: 'off', LOG_LEVEL: 'silent' });
  gw = await buildApp({ nc, log: createLogger('test', 'silent'), config, ledger, signals, identify });
  await gw.live.openKnown();
}, 60_000);

afterEach(() => vi.restoreAllMocks());

afterAll(async () => {
  await gw?.close();
  await nats?.stop();
});

/** `stream`: answered by a stream when let through (it is not knocked on with the rule as it is). */
type Door = { name: string; method: 'GET' | 'POST'; url: string; body?: unknown; dashboard?: boolean; stream?: boolean };
const rpc = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: 1, method, params });
const message = (id: string) => ({
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'hi' }] },
  configuration: { returnImmediately: true },
});

const DOORS: Record<'read' | 'list_agents' | 'send', Door[]> = {
  read: [
    { name: 'GetTask', method: 'POST', url: '/a2a/s', body: rpc('GetTask', { id: 's:laptops' }) },
    { name: 'ListTasks', method: 'POST', url: '/a2a/s', body: rpc('ListTasks', {}) },
    { name: 'SubscribeToTask', method: 'POST', url: '/a2a/s', body: rpc('SubscribeToTask', { id: 's:laptops' }), stream: true },
    { name: 'REST tasks/{id}', method: 'GET', url: '/a2a/s/tasks/s:laptops' },
    { name: 'REST tasks', method: 'GET', url: '/a2a/s/tasks' },
    { name: 'REST tasks/{id}:subscribe', method: 'GET', url: '/a2a/s/tasks/s:laptops:subscribe', stream: true },
    { name: 'dashboard tasks', method: 'GET', url: '/dashboard/api/tasks', dashboard: true },
    { name: 'dashboard task', method: 'GET', url: '/dashboard/api/task?key=box.s.laptops', dashboard: true },
    { name: 'dashboard chains', method: 'GET', url: '/dashboard/api/chains', dashboard: true },
    { name: 'dashboard attention', method: 'GET', url: '/dashboard/api/attention', dashboard: true },
    { name: 'dashboard feed', method: 'GET', url: '/dashboard/events', dashboard: true, stream: true },
    { name: 'ListSchedules', method: 'POST', url: '/a2a/s', body: rpc('ListSchedules', {}) },
  ],
  list_agents: [
    { name: '/agents', method: 'GET', url: '/agents' },
    { name: 'machine card', method: 'GET', url: '/.well-known/agent-card.json' },
    { name: 'machine card under /a2a', method: 'GET', url: '/a2a/.well-known/agent-card.json' },
    { name: 'session card', method: 'GET', url: '/a2a/s/.well-known/agent-card.json' },
    { name: 'dashboard overview', method: 'GET', url: '/dashboard/api/overview', dashboard: true },
  ],
  send: [
    { name: 'SendMessage', method: 'POST', url: '/a2a/s', body: rpc('SendMessage', message('new-1')) },
    { name: 'SendStreamingMessage', method: 'POST', url: '/a2a/s', body: rpc('SendStreamingMessage', message('new-2')), stream: true },
    { name: 'REST message:send', method: 'POST', url: '/a2a/s/message:send', body: message('new-3') },
    { name: 'CreateSchedule', method: 'POST', url: '/a2a/s', body: rpc('CreateSchedule', { recipients: ['box/s'], prompt: 'hi' }) },
  ],
};

async function knock(door: Door, remoteAddress = PHONE) {
  const res = await gw.app.inject({
    method: door.method,
    url: door.url,
    remoteAddress,
    headers: door.body ? { 'content-type': 'application/json' } : {},
    ...(door.body ? { payload: JSON.stringify(door.body) } : {}),
  });
  let body: any;
  try {
    body = res.json();
  } catch {
    body = {};
  }
  const err = body.error;
  return {
    status: res.statusCode,
    reason: err?.key ?? err?.data?.[0]?.reason ?? err?.details?.[0]?.reason,
    action: err?.data?.[0]?.metadata?.action ?? err?.details?.[0]?.metadata?.action,
    message: String(err?.message ?? ''),
  };
}

describe('every door asks the rules table', () => {
  for (const action of ['read', 'list_agents', 'send'] as const) {
    it(`refuses every ${action} door when the ${action} rule refuses, and only then`, async () => {
      for (const door of DOORS[action].filter((d) => !d.stream)) {
        const open = await knock(door);
        expect(open.reason, `${door.name} with the rule as it is`).not.toBe('ACTION_FORBIDDEN');
      }
      vi.spyOn(RULES[action], 'allows').mockReturnValue(false);
      for (const door of DOORS[action]) {
        const shut = await knock(door);
        expect(shut.reason, door.name).toBe('ACTION_FORBIDDEN');
        // JSON-RPC answers its errors with 200; every other binding with the error's HTTP status.
        expect(shut.status, door.name).toBe(door.url === '/a2a/s' ? 200 : 403);
        if (!door.dashboard) expect(shut.action, door.name).toBe(action);
        expect(shut.message, door.name).toContain(action.replace('_', ' '));
      }
    });
  }
});

describe("the dashboard's actions, from another device", () => {
  const act = (path: string, body: unknown, remoteAddress = PHONE) =>
    gw.app.inject({
      method: 'POST',
      url: `/dashboard/api/${path}`,
      remoteAddress,
      headers: { 'content-type': 'application/json', 'x-shrooms-dashboard': '1' },
      payload: JSON.stringify(body),
    });
  const state = async (id: string) => (await ledger.get(ledger.key('box', 's', id)))!.entry.task.status.state;
  const forbidden = async (path: string, body: unknown, action: Action) => {
    const res = await act(path, body);
    expect(res.statusCode, path).toBe(403);
    expect(res.json().error.key, path).toBe('ACTION_FORBIDDEN');
    expect(res.json().error.message, path).toContain(`may ${action}`);
  };

  it('cannot cancel a task another device asked for, nor release, reject or stop reminders', async () => {
    await forbidden('tasks/cancel', { key: 'box.s.laptops' }, 'cancel');
    await forbidden('tasks/release', { key: 'box.s.held' }, 'release');
    await forbidden('tasks/reject', { key: 'box.s.held' }, 'reject');
    await forbidden('agents/reminders', { agent: 'box/s', stop: true }, 'control');
    expect(await state('laptops')).toBe('TASK_STATE_SUBMITTED');
    expect(await state('held')).toBe('TASK_STATE_SUBMITTED');
  });

  it('may cancel the task it asked for itself, as on the A2A surface', async () => {
    const res = await act('tasks/cancel', { key: 'box.s.phones' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await state('phones')).toBe('TASK_STATE_CANCELED');
  });
});
