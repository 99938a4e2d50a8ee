/**
 * Scheduling from a session's MCP tools against a running scheduler: create, list, cancel; a
 * schedule fires its task through the normal path, and a cancelled one fires no more.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, rpc, startMesh, type Mesh } from '@shrooms/testing';
import { mcpOverStdio } from './support/mcp-stdio.js';

let mesh: Mesh;
let client: Client;

beforeAll(async () => {
  mesh = await startMesh({ scheduler: true, sessions: [{ name: 'demo' }] });
  // The session's machine is in Tokyo: a local time without a zone is read there.
  client = await mcpOverStdio({ ...mesh.env, SHROOMS_GATEWAY_URL: mesh.gatewayUrl, SHROOMS_AGENT_SESSION: 'planner', TZ: 'Asia/Tokyo' });
});
afterAll(async () => {
  await client?.close();
  await mesh?.stop();
});

const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as any;
const soon = (ms: number) => new Date(Date.now() + ms).toISOString();

it('creates, lists and cancels schedules with the MCP tools; only the live one fires', async () => {
  // `in` instead of `at`: a delay from now.
  const asked = Date.now();
  const fires = await call('schedule_task', { to: `${mesh.machine}/demo`, text: 'fires once', in: '3s' });
  expect(fires.isError, JSON.stringify(fires)).toBeFalsy();
  expect(Date.parse(fires.structuredContent.schedule.rule.at)).toBeGreaterThanOrEqual(asked + 3000);
  const staysAt = soon(6000);
  const stays = await call('schedule_task', { to: `${mesh.machine}/demo`, text: 'never fires', at: staysAt });
  const firesId = fires.structuredContent.schedule.id as string;
  const staysId = stays.structuredContent.schedule.id as string;

  const listed = await call('list_schedules', { mine: true });
  expect(listed.structuredContent.schedules.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([firesId, staysId]));

  const canceled = await call('cancel_schedule', { id: staysId });
  expect(canceled.structuredContent.schedule.state).toBe('canceled');
  expect((await call('list_schedules', {})).structuredContent.schedules.map((s: { id: string }) => s.id)).not.toContain(staysId);

  // The live schedule's occurrence becomes an ordinary task of the session, once.
  const fired = await eventually(async () => {
    const tasks = (await rpc(`${mesh.gatewayUrl}/a2a/demo`, 'ListTasks', { pageSize: 50 })).result.tasks;
    const mine = tasks.filter((t: any) => t.metadata['shrooms/schedule'] === firesId);
    return mine.length ? mine : undefined;
  }, 30_000);
  expect(fired).toHaveLength(1);
  // Past the canceled one's time, it has produced nothing. Shown by a marker due two scheduler ticks
  // (1 s each) after it: once the marker has fired and finished, the scheduler has long since taken
  // up anything due at `staysAt` (it starts what is due at every tick, in a pass over all schedules).
  const marker = await call('schedule_task', {
    to: `${mesh.machine}/demo`,
    text: 'marker',
    at: new Date(Math.max(Date.parse(staysAt), Date.now()) + 2000).toISOString(),
  });
  const markerId = marker.structuredContent.schedule.id as string;
  await eventually(async () => {
    const tasks = (await rpc(`${mesh.gatewayUrl}/a2a/demo`, 'ListTasks', { pageSize: 100 })).result.tasks;
    return tasks.some((t: any) => t.metadata['shrooms/schedule'] === markerId && t.status.state === 'TASK_STATE_COMPLETED');
  }, 30_000);
  const all = (await rpc(`${mesh.gatewayUrl}/a2a/demo`, 'ListTasks', { pageSize: 100 })).result.tasks;
  expect(all.filter((t: any) => t.metadata['shrooms/schedule'] === staysId)).toEqual([]);
  expect(all.filter((t: any) => t.metadata['shrooms/schedule'] === firesId)).toHaveLength(1);
});

it("reads a local time without a zone in the machine's zone, and a time of day as the next one", async () => {
  const before = Date.now();
  const r = await call('schedule_task', { to: `${mesh.machine}/demo`, text: 'tea', at: '08:00', repeat: 'daily' });
  expect(r.isError, JSON.stringify(r)).toBeFalsy();
  const s = r.structuredContent.schedule;
  expect(s.rule.zone).toBe('Asia/Tokyo');
  // 08:00 in Tokyo (no daylight saving) is 23:00 UTC: the next one, within a day.
  expect(s.next.at).toMatch(/T23:00:00\.000Z$/);
  expect(Date.parse(s.next.at)).toBeGreaterThan(before);
  expect(Date.parse(s.next.at)).toBeLessThanOrEqual(before + 86_400_000);
  expect((await call('cancel_schedule', { id: s.id })).structuredContent.schedule.state).toBe('canceled');
});

it('schedule_task refuses a time given twice, none, or a delay it does not take, saying why', async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ at: soon(60_000), in: '1m' }, /say when with at or in, not both/],
    [{}, /say when: at \(a time\) or in \(a delay such as 10m\)/],
    [{ in: 'tomorrow' }, /delay "tomorrow": not a delay/],
    [{ in: '2y' }, /unknown unit y/],
    [{ at: '24:00' }, /at "24:00" is not a time of day: 00:00 to 23:59/],
  ];
  for (const [when, why] of cases) {
    const r = await call('schedule_task', { to: `${mesh.machine}/demo`, text: 'never made', ...when });
    expect(r.isError, JSON.stringify(r)).toBe(true);
    expect(r.content[0].text).toMatch(why);
  }
  const listed = await call('list_schedules', { all: true });
  expect(listed.structuredContent.schedules.filter((s: { prompt: string }) => s.prompt === 'never made')).toEqual([]);
});
