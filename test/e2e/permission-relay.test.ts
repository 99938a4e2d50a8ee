/**
 * The permission relay with prompts asked side by side (the echo harness asks for each tool of
 * `permission: A B` at once, as a model's parallel tool calls do): the task shows one question at a
 * time, each answer goes to its own prompt, and the task finishes once both are answered.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, rpc, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;
beforeAll(async () => {
  mesh = await startMesh({ sessions: [{ name: 'perm' }] });
});
afterAll(async () => {
  await mesh?.stop();
});

const url = () => `${mesh.gatewayUrl}/a2a/perm`;
const msg = (id: string, text: string, taskId?: string) => ({
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) },
  configuration: { returnImmediately: true },
});
const asking = (id: string, tool: string) =>
  eventually(async () => {
    const t = (await rpc(url(), 'GetTask', { id })).result;
    return t.status.state === 'TASK_STATE_INPUT_REQUIRED' && t.metadata['shrooms/permission']?.tool === tool ? t : undefined;
  }, 30_000);

it('shows prompts asked side by side one after the other, each answer going to its own', async () => {
  const t = (await rpc(url(), 'SendMessage', msg('two', 'permission: Bash WebFetch'))).result.task;
  await asking(t.id, 'Bash');
  await rpc(url(), 'SendMessage', msg('two-allow', 'allow', t.id));
  await asking(t.id, 'WebFetch');
  await rpc(url(), 'SendMessage', msg('two-deny', 'deny', t.id));
  const done = await eventually(async () => {
    const cur = (await rpc(url(), 'GetTask', { id: t.id })).result;
    return cur.status.state === 'TASK_STATE_COMPLETED' ? cur : undefined;
  }, 30_000);
  expect(done.artifacts[0].parts[0].text).toBe('allowed Bash, denied WebFetch');
  expect(done.metadata['shrooms/permission_answer']).toMatchObject({ answer: 'deny', tool: 'WebFetch' });
});

it('keeps an answer to a permission prompt for the bridge: refused while it is down, asked again once it is back', async () => {
  const t = (await rpc(url(), 'SendMessage', msg('down', 'permission: Bash'))).result.task;
  await asking(t.id, 'Bash');
  await mesh.bridges.get('perm')!.kill();
  // Only the bridge can pass an answer to the prompt; taken into the ledger, the task would wait for good.
  const refused = await rpc(url(), 'SendMessage', msg('down-allow', 'allow', t.id));
  expect(refused.error?.code, JSON.stringify(refused)).toBe(-32061); // BRIDGE_UNAVAILABLE, retryable
  expect((await rpc(url(), 'GetTask', { id: t.id })).result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  // The prompt died with the session's CLI: the bridge back delivers the task again, and it asks again.
  await mesh.startBridge('perm', 'echo');
  await eventually(async () => {
    const cur = (await rpc(url(), 'GetTask', { id: t.id })).result;
    return cur.metadata['shrooms/redeliveries'] === 1 && cur.status.state === 'TASK_STATE_INPUT_REQUIRED' ? cur : undefined;
  }, 30_000);
  await rpc(url(), 'SendMessage', msg('down-allow-again', 'allow', t.id));
  const done = await eventually(async () => {
    const cur = (await rpc(url(), 'GetTask', { id: t.id })).result;
    return cur.status.state === 'TASK_STATE_COMPLETED' ? cur : undefined;
  }, 30_000);
  expect(done.artifacts[0].parts[0].text).toBe('allowed Bash');
});
