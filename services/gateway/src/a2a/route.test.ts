/**
 * `POST /a2a` (no session in the path) routed by `metadata["shrooms/session"]`, on a real
 * nats-server: a name of this machine's session goes to it; a session of another machine is
 * refused, never taken for this machine's session of the same name.
 */
import { beforeAll, expect, it } from 'vitest';
import { transitions } from '@shrooms/ledger';
import { useTestGateway } from '../testing/gateway.js';

const t = useTestGateway({ SHROOMS_MACHINE: 'laptop' });

beforeAll(async () => {
  // This machine (laptop) has a session named `tests`: it has a task in the ledger.
  const entry = transitions.newTask({
    id: 'tests:m-0',
    contextId: 'ctx-0',
    message: { messageId: 'm-0', role: 'ROLE_USER', parts: [{ text: 'first' }] },
    metadata: { 'shrooms/device': 'laptop' },
    queued: false,
    now: new Date(),
  });
  await t.ledger.create(t.ledger.key('laptop', 'tests', 'm-0'), entry);
});

/** SendMessage to `POST /a2a`, naming its session in the request's metadata. */
const send = async (messageId: string, session: string) =>
  (
    await t.gw.app.inject({
      method: 'POST',
      url: '/a2a',
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId, role: 'ROLE_USER', parts: [{ text: 'run the suite' }] },
          metadata: { 'shrooms/session': session },
          configuration: { returnImmediately: true },
        },
      },
    })
  ).json();

it("refuses a session of another machine with SESSION_NOT_FOUND, creating no task for this machine's session of that name", async () => {
  const r = await send('m-1', 'homeserver/tests');
  expect(r.error.code).toBe(-32056);
  expect(r.error.data[0].reason).toBe('SESSION_NOT_FOUND');
  expect(r.error.message).toContain('homeserver');
  expect(await t.ledger.get(t.ledger.key('laptop', 'tests', 'm-1'))).toBeNull();
});

it('routes to its own session when metadata names it with this machine or bare', async () => {
  expect((await send('m-2', 'laptop/tests')).result.task.id).toBe('tests:m-2');
  expect((await send('m-3', 'tests')).result.task.id).toBe('tests:m-3');
});
