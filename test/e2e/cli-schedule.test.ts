/**
 * `shrooms-agent a2a schedule` as a person runs it: each command a subprocess against a mesh of real
 * processes (nats-server, gateway, an echo bridge, the scheduler); `--json` output parsed, exit codes
 * checked, errors one line saying what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@shrooms/testing';
import { startClientMesh, type ClientMesh } from './support/client-mesh.js';

const M = 'schedbox';
let mesh: ClientMesh;

beforeAll(async () => {
  mesh = await startClientMesh({ machine: M, sessions: [{ name: 'demo' }] });
  await mesh.startScheduler();
});
afterAll(async () => {
  await mesh?.stop();
});

const json = (s: string) => JSON.parse(s) as any;
const oneLine = (s: string) => s.trimEnd().split('\n').length === 1;

describe('a2a schedule', () => {
  it('schedule create, list and cancel go through the scheduler', async () => {
    const created = await mesh.cli(
      [
        'a2a',
        'schedule',
        'create',
        '--to',
        'demo',
        '--at',
        '2035-06-01T08:00',
        '--zone',
        'Europe/Berlin',
        '--repeat',
        'weekly:mon',
        'weekly',
        'report',
        '--json',
      ],
      {
        SHROOMS_AGENT_SESSION: 'slow',
      },
    );
    expect(created.code).toBe(0);
    const s = json(created.stdout).schedule;
    expect(s).toMatchObject({ recipients: [`${M}/demo`], prompt: 'weekly report', state: 'active', rule: { zone: 'Europe/Berlin' } });

    const mine = await mesh.cli(['a2a', 'schedule', 'list', '--mine', '--json'], { SHROOMS_AGENT_SESSION: 'slow' });
    expect(json(mine.stdout).schedules.map((x: { id: string }) => x.id)).toContain(s.id);
    const human = await mesh.cli(['a2a', 'schedule', 'list']);
    expect(human.stdout).toMatch(new RegExp(`${s.id} → ${M}/demo: next `));

    const canceled = await mesh.cli(['a2a', 'schedule', 'cancel', s.id, '--json']);
    expect(canceled.code).toBe(0);
    expect(json(canceled.stdout).schedule.state).toBe('canceled');
    const after = await mesh.cli(['a2a', 'schedule', 'list', '--json']);
    expect(json(after.stdout).schedules.map((x: { id: string }) => x.id)).not.toContain(s.id);
  });

  it("schedule create --at 08:00 is the next 08:00 in this machine's zone, and reads as that wall time", async () => {
    const tokyo = { TZ: 'Asia/Tokyo' };
    const before = Date.now();
    const r = await mesh.cli(['a2a', 'schedule', 'create', '--to', 'demo', '--at', '08:00', '--repeat', 'daily', 'tea', '--json'], tokyo);
    expect(r.code, r.stderr).toBe(0);
    const s = json(r.stdout).schedule;
    expect(s.rule).toMatchObject({ zone: 'Asia/Tokyo', repeat: { freq: 'daily' } });
    // 08:00 in Tokyo (no daylight saving) is 23:00 UTC: the next one, within a day.
    const next = Date.parse(s.next.at);
    expect(new Date(next).toISOString()).toMatch(/T23:00:00\.000Z$/);
    expect(next).toBeGreaterThan(before);
    expect(next).toBeLessThanOrEqual(before + 86_400_000);
    const human = await mesh.cli(['a2a', 'schedule', 'list'], tokyo);
    expect(human.stdout).toMatch(
      new RegExp(`${s.id} → ${M}/demo: next \\w{3} \\d{1,2} \\w{3} \\d{4} 08:00 \\(Asia/Tokyo, repeating daily\\) — "tea"`),
    );
    await mesh.cli(['a2a', 'schedule', 'cancel', s.id]);
    const bad = await mesh.cli(['a2a', 'schedule', 'create', '--to', 'demo', '--at', '24:00', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('shrooms-agent a2a schedule create: at "24:00" is not a time of day: 00:00 to 23:59 [INVALID_PARAMS]\n');
  });

  it('schedule create --in counts from now; --at with --in, or a delay it does not take, is one line (exit 1)', async () => {
    const before = Date.now();
    const r = await mesh.cli(['a2a', 'schedule', 'create', '--to', 'demo', '--in', '1h30m', 'later', '--json']);
    const after = Date.now();
    expect(r.code, r.stderr).toBe(0);
    const s = json(r.stdout).schedule;
    const at = Date.parse(s.rule.at);
    expect(at).toBeGreaterThanOrEqual(before + 90 * 60_000);
    expect(at).toBeLessThanOrEqual(after + 90 * 60_000 + 1_000);
    expect(Date.parse(s.next.at)).toBe(at);
    await mesh.cli(['a2a', 'schedule', 'cancel', s.id]);

    const both = await mesh.cli(['a2a', 'schedule', 'create', '--to', 'demo', '--at', '2035-06-01T08:00:00Z', '--in', '10m', 'x']);
    expect(both.code).toBe(1);
    expect(oneLine(both.stderr)).toBe(true);
    expect(both.stderr).toMatch(/say when with --at or --in, not both/);
    const bad = await mesh.cli(['a2a', 'schedule', 'create', '--to', 'demo', '--in', '10 parsecs', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'shrooms-agent a2a schedule create: delay "10 parsecs": unknown unit parsecs (try 90s, 10m, 2h, 3d) [INVALID_PARAMS]\n',
    );
  });

  it('schedule create refuses a recipient of this machine that is no session, as an ask would (exit 1)', async () => {
    const r = await mesh.cli(['a2a', 'schedule', 'create', '--to', 'ghost', '--in', '1h', 'for nobody']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`shrooms-agent a2a schedule create: no session ${M}/ghost [SESSION_NOT_FOUND]\n`);
    // Not stored: a mistyped name is said now, not when it fires.
    const all = await mesh.cli(['a2a', 'schedule', 'list', '--all', '--json']);
    expect(json(all.stdout).schedules.filter((x: { recipients: string[] }) => x.recipients.includes(`${M}/ghost`))).toEqual([]);
  });

  it('schedule list says when an occurrence was refused, not only that the schedule is done', async () => {
    // A session when it was scheduled, gone (its bridge stopped, no tasks) when it fires.
    const brief = await mesh.startBridge('brief');
    const r = await mesh.cli(['a2a', 'schedule', 'create', '--to', 'brief', '--in', '3s', 'for nobody', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const id = json(r.stdout).schedule.id as string;
    await brief.stop();
    const done = await eventually(
      async () => {
        const all = await mesh.cli(['a2a', 'schedule', 'list', '--all', '--json']);
        const s = json(all.stdout).schedules.find((x: { id: string }) => x.id === id);
        return s?.state === 'done' ? s : undefined;
      },
      30_000,
      500,
    );
    const human = await mesh.cli(['a2a', 'schedule', 'list', '--all']);
    expect(human.stdout).toContain(
      `${id} → ${M}/brief: done (UTC) — "for nobody"\n  occurrence ${done.last.occurrence} refused for ${M}/brief: no session ${M}/brief [SESSION_NOT_FOUND]\n`,
    );
  });

  it('schedule with the gateway unreachable says what to do in one line (exit 1)', async () => {
    const r = await mesh.cli(['a2a', 'schedule', 'list', '--gateway', 'http://127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(true);
    expect(r.stderr).toMatch(/cannot reach the gateway at http:\/\/127\.0\.0\.1:1/);
  });
});
