/**
 * Whether a session exists, asked with names a client makes up: on a real nats-server, through the
 * gateway's routes. A name that is no session leaves nothing behind in the gateway; a real one keeps
 * its listing index, so sends to it still cost no read.
 */
import { expect, it } from 'vitest';
import { useTestGateway } from '../testing/gateway.js';
import { askedTask } from '../testing/tasks.js';

const t = useTestGateway();

/** A task of `session` written to the ledger as its bridge would, not through this gateway. */
function seed(session: string, id: string) {
  return t.ledger.create(t.ledger.key('box', session, id), askedTask(session, id, { device: 'box' }));
}

const rpc = async (session: string, method: string, params: unknown) =>
  (await t.gw.app.inject({ method: 'POST', url: `/a2a/${session}`, payload: { jsonrpc: '2.0', id: 1, method, params } })).json();

it('keeps nothing for session names that do not exist, however many are asked about', async () => {
  for (let i = 0; i < 50; i++) {
    const card = await t.gw.app.inject({ method: 'GET', url: `/a2a/probe-${i}/.well-known/agent-card.json` });
    expect(card.statusCode).toBe(404);
    expect(card.json().error.details[0].reason).toBe('SESSION_NOT_FOUND');
    expect((await rpc(`listed-${i}`, 'ListTasks', {})).error.data[0].reason).toBe('SESSION_NOT_FOUND');
  }
  expect(t.gw.live.indexedSessions()).toEqual([]);
});

it('finds a session whose first task was stored after it was asked about and not found', async () => {
  expect((await rpc('late', 'ListTasks', {})).error.data[0].reason).toBe('SESSION_NOT_FOUND');
  await seed('late', 'm-1');
  const r = await rpc('late', 'ListTasks', {});
  expect(r.result.tasks.map((t: { id: string }) => t.id)).toEqual(['late:m-1']);
});

it('keeps the listing index of a session that has tasks, so a new task to it is taken with no ledger read', async () => {
  await seed('real', 'm-1');
  expect((await rpc('real', 'ListTasks', {})).result.totalSize).toBe(1);
  expect(t.gw.live.indexedSessions()).toContain('real');
  const before = t.ledger.reads;
  const sent = await rpc('real', 'SendMessage', {
    message: { messageId: 'm-2', role: 'ROLE_USER', parts: [{ text: 'again' }] },
    configuration: { returnImmediately: true },
  });
  expect(sent.result.task.id).toBe('real:m-2');
  expect(t.ledger.reads - before).toBe(0);
});
