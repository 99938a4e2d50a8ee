/**
 * The A2A surface under hostile input (spec §4, §11, §13): FUZZ_COUNT (default 10 000) generated
 * malformed or hostile requests — JSON-RPC and HTTP+JSON, raw over TCP so nothing normalizes them —
 * from a fixed seed (FUZZ_SEED). Every answer must be a well-formed error of the one table with the
 * right code and HTTP status; no 5xx, no crash, no hang, bounded memory, and no task created.
 *
 * Longer run on demand: `FUZZ_COUNT=100000 pnpm test:chaos fuzz` (another seed: FUZZ_SEED=…).
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '@shrooms/protocol';
import { CHAOS_OUTPUT_DIR, isAlive, mib, rawExchange, reportChaos, rpc, rssBytes, startMesh, type Mesh } from '@shrooms/testing';
import { CaseGenerator, type FuzzCase } from './fuzz/cases.js';
import { judge, type Verdict } from './fuzz/oracle.js';
import { Prng } from './fuzz/prng.js';

const COUNT = Number(process.env.FUZZ_COUNT ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_130);
const CONCURRENCY = 16;
/**
 * Every PACED_EVERY-th request is written PACE at a time, as a client on a slower link than loopback
 * writes it: a server that answers before a request is all in must not lose that answer to a reset
 * (docs/reliability.md, "The oversize reset, explained"), which one write never shows.
 */
const PACED_EVERY = 4;
const PACE = { bytes: 16 * 1024, gapMs: 2 };
/** Bound on one answer (a hang shows as a failure, never as a stuck run). */
const ANSWER_BOUND_MS = 15_000;
/** Growth of the gateway's RSS over the run that still counts as bounded. */
const RSS_GROWTH_BOUND = 256 * 1024 * 1024;
const SESSION = 'fz';

let mesh: Mesh;
beforeAll(async () => {
  mesh = await startMesh({ sessions: [{ name: SESSION }] });
});
afterAll(async () => {
  await mesh?.stop();
});

interface Failure {
  index: number;
  family: string;
  note: string;
  paced: boolean;
  problem: string;
  request: string;
  answer: string;
}

it(
  `answers ${COUNT} hostile requests with well-formed errors: no 5xx, no crash, no hang, bounded memory`,
  async () => {
    const url = `${mesh.gatewayUrl}/a2a/${SESSION}`;
    const done = await rpc(url, 'SendMessage', { message: { messageId: 'done-1', role: 'ROLE_USER', parts: [{ text: 'finished' }] } });
    expect(done.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const pid = mesh.gateway.child.pid!;
    const gen = new CaseGenerator(new Prng(SEED), {
      session: SESSION,
      doneTaskId: done.result.task.id,
      bodyLimit: DEFAULT_LIMITS.bodyBytes,
      textLimit: DEFAULT_LIMITS.textBytes,
      partsLimit: DEFAULT_LIMITS.partsPerMessage,
      metadataLimit: DEFAULT_LIMITS.metadataEntries,
    });
    const outputBefore = mesh.gateway.output().length;
    const rssStart = (await rssBytes(pid))!;
    let rssPeak = rssStart;

    const byOutcome = new Map<string, number>();
    const byFamily = new Map<string, number>();
    const failures: Failure[] = [];
    let sent = 0;
    let pacedSent = 0;
    let fiveXX = 0;
    let hangs = 0;
    let accepted = 0;
    let next = 0;
    const started = Date.now();

    async function worker(): Promise<void> {
      while (next < COUNT) {
        const index = next++;
        const c: FuzzCase = gen.next();
        sent++;
        byFamily.set(c.family, (byFamily.get(c.family) ?? 0) + 1);
        const paced = index % PACED_EVERY === 1;
        if (paced) pacedSent++;
        const r = await rawExchange(mesh.gatewayPort, c.raw, {
          timeoutMs: ANSWER_BOUND_MS,
          halfClose: c.halfClose ?? false,
          ...(paced ? { pace: PACE } : {}),
        });
        const v: Verdict = judge(c, r);
        byOutcome.set(v.outcome, (byOutcome.get(v.outcome) ?? 0) + 1);
        if (v.fiveXX) fiveXX++;
        if (v.hang) hangs++;
        if (v.accepted) accepted++;
        if (v.problem) {
          failures.push({
            index,
            family: c.family,
            note: c.note,
            paced,
            problem: v.problem,
            request: c.raw.subarray(0, 400).toString('latin1'),
            answer: `${r.status ?? r.error} ${r.body.subarray(0, 400).toString('utf8')}`,
          });
        }
        if (index % 500 === 0) rssPeak = Math.max(rssPeak, (await rssBytes(pid)) ?? 0);
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
    const elapsedMs = Date.now() - started;

    const alive = isAlive(pid) && mesh.gateway.child.exitCode === null;
    const health = await fetch(`${mesh.gatewayUrl}/healthz`).then(
      (r) => r.status,
      () => 0,
    );
    const rssEnd = (await rssBytes(pid)) ?? 0;
    rssPeak = Math.max(rssPeak, rssEnd);
    const log = mesh.gateway.output().slice(outputBefore);
    const internalLogged = (log.match(/"msg":"(internal error|unhandled error)"/g) ?? []).length;
    // The fuzzer created no task: the session still holds only the one it finished first.
    const list = await rpc(url, 'ListTasks', { pageSize: 100 });
    const created = list.result.totalSize - 1;
    const crashes = alive && health === 200 ? 0 : 1;

    const outcomes = [...byOutcome].sort((a, b) => b[1] - a[1]);
    const lines = [
      `\n=== fuzz: seed ${SEED}, ${sent} requests sent (${pacedSent} paced: ${PACE.bytes / 1024} KiB every ${PACE.gapMs} ms), ${CONCURRENCY} at a time, ${(elapsedMs / 1000).toFixed(1)} s ===`,
      `families: ${[...byFamily].map(([f, n]) => `${f} ${n}`).join(', ')}`,
      'answers by code:',
      ...outcomes.map(([o, n]) => `  ${String(n).padStart(6)}  ${o}`),
      `5xx: ${fiveXX} (must be 0)   crashes: ${crashes} (must be 0)   hangs: ${hangs} (must be 0)   accepted: ${accepted} (must be 0)   tasks created: ${created} (must be 0)`,
      `internal errors logged by the gateway: ${internalLogged} (must be 0)   answers not matching the table: ${failures.length} (must be 0)`,
      `gateway RSS: start ${mib(rssStart)}, peak ${mib(rssPeak)}, end ${mib(rssEnd)} (bound: start + ${mib(RSS_GROWTH_BOUND)})`,
    ];
    if (failures.length) {
      lines.push('first failures:');
      for (const f of failures.slice(0, 15))
        lines.push(
          `  #${f.index} [${f.family}]${f.paced ? ' (paced)' : ''} ${f.note}: ${f.problem}\n      request ${JSON.stringify(f.request.slice(0, 160))}\n      answer  ${JSON.stringify(f.answer.slice(0, 200))}`,
        );
    }
    process.stdout.write(lines.join('\n') + '\n');
    await mkdir(CHAOS_OUTPUT_DIR, { recursive: true });
    await writeFile(join(CHAOS_OUTPUT_DIR, 'fuzz-failures.json'), JSON.stringify(failures, null, 2) + '\n');
    const figures = {
      seed: SEED,
      sent,
      paced: { sent: pacedSent, ...PACE },
      concurrency: CONCURRENCY,
      elapsedMs,
      answersByCode: Object.fromEntries(outcomes),
      fiveXX,
      crashes,
      hangs,
      accepted,
      tasksCreated: created,
      internalLogged,
      mismatches: failures.length,
      rss: { startBytes: rssStart, peakBytes: rssPeak, endBytes: rssEnd },
    };
    await reportChaos(
      'fuzz',
      [
        {
          scenario: 'fuzz: hostile A2A requests',
          load: `${sent} requests (${pacedSent} paced), ${CONCURRENCY} at a time, seed ${SEED}`,
          faults: 'malformed/hostile input (16 families)',
          acknowledged: 0,
          lost: 0,
          stuck: 0,
          recoveryMs: null,
          details: { fiveXX, crashes, hangs, accepted, mismatches: failures.length, rssPeakMiB: +(rssPeak / 1048576).toFixed(1) },
        },
      ],
      { fuzz: figures },
    );

    expect(sent).toBe(COUNT);
    expect(fiveXX, '5xx answers').toBe(0);
    expect(crashes, 'gateway crashed').toBe(0);
    expect(hangs, 'requests with no answer within the bound').toBe(0);
    expect(accepted, 'hostile requests that were accepted').toBe(0);
    expect(created, 'tasks the fuzzer created').toBe(0);
    expect(internalLogged, 'internal errors in the gateway log').toBe(0);
    expect(failures.map((f) => `#${f.index} [${f.family}] ${f.note}: ${f.problem}`).slice(0, 20)).toEqual([]);
    expect(rssEnd - rssStart, 'gateway RSS growth').toBeLessThan(RSS_GROWTH_BOUND);
  },
  Math.max(600_000, COUNT * 30),
);

it('never takes the caller from forwarded-for headers', async () => {
  const res = await fetch(`${mesh.gatewayUrl}/a2a/${SESSION}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'A2A-Version': '1.0',
      'X-Forwarded-For': '10.0.0.9',
      Forwarded: 'for=10.0.0.9',
      'X-Real-IP': '10.0.0.9',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'xff-1', role: 'ROLE_USER', parts: [{ text: 'who am I' }] } },
    }),
  });
  const task = ((await res.json()) as { result: { task: { metadata: Record<string, unknown> } } }).result.task;
  expect(task.metadata['shrooms/device']).toBe(mesh.machine);
});
