import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, Supervisor, backoffDelay, lastWords, type Exit, type RunningPart } from './supervise.js';

/** A part that runs until `crash()` or `stop()`; `events` records what happened, in order. */
function fakePart(name: string, events: string[], gate?: () => Promise<void>) {
  let crash: (e: Exit) => void = () => {};
  let starts = 0;
  return {
    crash: (e: Exit = { code: null, signal: 'SIGKILL' }) => crash(e),
    spec: {
      name,
      async start(): Promise<RunningPart> {
        const n = ++starts;
        events.push(`${name} start ${n}`);
        if (n > 1 && gate) await gate();
        events.push(`${name} ready ${n}`);
        const exited = new Promise<Exit>((r) => (crash = r));
        return { pid: 1000 + n, exited, stop: async () => void events.push(`${name} stop`) };
      },
    },
  };
}

const quick = { firstMs: 1, maxMs: 8, stableMs: 60_000 };

function until(events: string[], what: string): Promise<void> {
  return new Promise((resolve) => {
    const t = setInterval(() => {
      if (events.includes(what)) {
        clearInterval(t);
        resolve();
      }
    }, 1);
  });
}

describe('Supervisor', () => {
  it('waits 0.5 s before a first restart, doubling to 30 s', () => {
    expect([1, 2, 3, 4, 7, 8, 20].map((n) => backoffDelay(n))).toEqual([500, 1000, 2000, 4000, 30_000, 30_000, 30_000]);
    expect(DEFAULT_BACKOFF).toEqual({ firstMs: 500, maxMs: 30_000, stableMs: 60_000 });
  });

  it('restarts a part that exits unexpectedly, and says so', async () => {
    const events: string[] = [];
    const lines: string[] = [];
    const logged: Record<string, unknown>[] = [];
    const s = new Supervisor({ print: (l) => lines.push(l), log: (e) => logged.push(e), backoff: quick });
    const gw = fakePart('gateway', events);
    await s.add(gw.spec);
    gw.crash({ code: 1, signal: null });
    await until(events, 'gateway ready 2');
    await until(lines, 'gateway is back (pid 1002, restart 1)');
    expect(lines[0]).toBe('gateway exited unexpectedly (code 1); restarting in 0.0 s');
    expect(logged.map((e) => e.event)).toEqual(['exited', 'restarted']);
    // up.log says what the terminal said (`logs up` shows its msg).
    expect(logged.map((e) => e.msg)).toEqual([lines[0], 'gateway is back (pid 1002, restart 1)']);
    expect(s.restarts()).toEqual({ gateway: 1 });
    await s.stop();
  });

  it('restarts NATS first: the others wait until it is back', async () => {
    const events: string[] = [];
    let release!: () => void;
    const natsBack = new Promise<void>((r) => (release = r));
    const logged: string[] = [];
    const s = new Supervisor({ print: () => {}, log: (e) => logged.push(`${e.part} ${e.event}`), backoff: quick });
    const nats = fakePart('nats', events, () => natsBack);
    const gw = fakePart('gateway', events);
    await s.add(nats.spec);
    await s.add(gw.spec);
    nats.crash();
    await until(events, 'nats start 2');
    gw.crash();
    await until(logged, 'gateway waiting');
    expect(events).not.toContain('gateway start 2');
    release();
    await until(events, 'gateway ready 2');
    expect(events.slice(4)).toEqual(['nats start 2', 'nats ready 2', 'gateway start 2', 'gateway ready 2']);
    await s.stop();
  });

  it('stops everything, NATS last, and restarts nothing after a stop', async () => {
    const events: string[] = [];
    const s = new Supervisor({ print: () => {}, log: () => {}, backoff: quick });
    const nats = fakePart('nats', events);
    const gw = fakePart('gateway', events);
    const bridge = fakePart('bridge', events);
    for (const p of [nats, gw, bridge]) await s.add(p.spec);
    await s.stop();
    gw.crash();
    expect(events.slice(6)).toEqual(['bridge stop', 'gateway stop', 'nats stop']);
    expect(s.restarts()).toEqual({ nats: 0, gateway: 0, bridge: 0 });
  });
});

describe('lastWords', () => {
  it('is the last line a part printed: a plain one as it is, a JSON log entry as its message and error', () => {
    expect(lastWords('starting\nshrooms-agent: listen EADDRINUSE: address already in use 127.0.0.1:7387\n\n')).toBe(
      'shrooms-agent: listen EADDRINUSE: address already in use 127.0.0.1:7387',
    );
    expect(lastWords('{"level":50,"msg":"cannot start","err":{"message":"nats: Authorization Violation"}}\n')).toBe(
      'cannot start: nats: Authorization Violation',
    );
    expect(lastWords('{"level":30,"msg":"nats connected"}')).toBe('nats connected');
    expect(lastWords('{"level":30}')).toBe('{"level":30}');
  });

  it('is nothing when the part printed nothing', () => {
    expect(lastWords('')).toBeUndefined();
    expect(lastWords('\n  \n')).toBeUndefined();
  });
});
