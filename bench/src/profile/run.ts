/**
 * `pnpm bench --profile`: ours alone, its services started with `--cpu-prof`, driven by the same
 * load generator through the hot paths (blocking sends one at a time and 16 at once, non-blocking
 * sends 64 at once, streams, GetTask and ListTasks), then stopped cleanly so V8 writes the profiles.
 * Returns where each process spent its time.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '@shrooms/testing';
import { startBenchNats } from '../arms/nats.js';
import { MACHINE, OURS_SESSIONS, startOurs } from '../arms/ours.js';
import { SHELF } from '../arms/shelf.js';
import { startChild } from '../child.js';
import type { LatencyJob, ThroughputJob } from '../loadgen/jobs.js';
import type { Plan } from '../plan.js';
import { summariseProfile, type ProfileSummary } from './summarise.js';

export interface ProfileReport {
  schema: 'shrooms-bench-profile/1';
  startedAt: string;
  mode: Plan['mode'];
  workload: string[];
  guard: boolean;
  processes: Record<string, ProfileSummary & { requests: string }>;
}

/**
 * What the profiled load is: every kind of request in turn, only blocking sends 16 at once (the
 * tasks/s and CPU aims), or only blocking sends one at a time (the p50 aim: at concurrency 1 each
 * process's time per request is its share of the latency).
 */
export type ProfilePhase = 'all' | 'c16' | 'c1';

export async function runProfile(
  plan: Plan,
  dir: string,
  log: (s: string) => void,
  phase: ProfilePhase = 'all',
  sessions = 1,
): Promise<ProfileReport> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const nats = await startBenchNats(MACHINE, OURS_SESSIONS);
  const workload: string[] = [];
  let sends = 0;
  let ours: Awaited<ReturnType<typeof startOurs>> | undefined;
  let loadgen: Awaited<ReturnType<typeof startChild>> | undefined;
  let pids: Record<string, number>;
  // As `up` runs it: the gateway admits in its own process, so the guard is in its profile.
  const guard = false;
  try {
    // Node 20 refuses --cpu-prof in NODE_OPTIONS; a preloaded module starts the profiler instead.
    // A plain .mjs beside the sources (tsc does not copy it to dist).
    const preload = join(REPO_ROOT, 'bench', 'src', 'profile', 'cpu-prof-preload.mjs');
    // Unbundled: in the bundle every function is in one of a few chunk files, and the summary's
    // areas (packages) could not be told apart; the code that runs is the same.
    ours = await startOurs(nats, {
      admission: 'local',
      unbundled: true,
      spread: sessions,
      env: { NODE_OPTIONS: `--import ${preload}`, BENCH_CPU_PROF_DIR: dir },
    });
    pids = ours.pids();
    loadgen = await startChild('loadgen', 'loadgen/main.ts', [], nats.adminEnv);
    const lg = loadgen;
    const target = { kind: 'http' as const, url: ours.url };
    const o = ours;
    const lat = async (job: Omit<LatencyJob, 'type'>, what: string) => {
      const r = await lg.call<{ samples: number[] }>({ type: 'latency', ...job });
      workload.push(`${what}: ${r.samples.length}`);
      return r;
    };
    const thr = async (job: Omit<ThroughputJob, 'type'>, what: string) => {
      const r = await lg.call<{ done: number }>({ type: 'throughput', ...job });
      workload.push(`${what}: ${r.done}`);
      sends += r.done;
      return r;
    };
    const k = plan.mode === 'full' ? 3 : 1;
    if (phase === 'c1') {
      await lat({ target, op: 'send', n: 3_000 * k, maxMs: 300_000 }, 'blocking SendMessage, one at a time');
    } else if (phase === 'c16') {
      await thr(
        {
          target: sessions > 1 ? { ...target, urls: o.spreadUrls } : target,
          op: 'send',
          concurrency: 16,
          durationMs: 5_000 * k,
          maxTasks: 1e6,
          drainTimeoutMs: 0,
        },
        `blocking SendMessage, 16 at once${sessions > 1 ? ` over ${sessions} sessions` : ''}`,
      );
    } else {
      await lat({ target, op: 'send', n: 300 * k, maxMs: 120_000 }, 'blocking SendMessage, one at a time');
      await thr(
        { target, op: 'send', concurrency: 16, durationMs: 3_000 * k, maxTasks: 1e6, drainTimeoutMs: 0 },
        'blocking SendMessage, 16 at once',
      );
      await thr(
        { target, op: 'send_nb', concurrency: 64, durationMs: 2_000 * k, maxTasks: 1e6, drainTimeoutMs: 300_000 },
        'non-blocking SendMessage, 64 at once (then drained)',
      );
      await lat({ target, op: 'stream', n: 200 * k, maxMs: 120_000 }, 'SendStreamingMessage, one at a time');
      await o.preload(0, 10_000);
      const shelf = { kind: 'http' as const, url: o.shelfUrl };
      await new Promise((r) => setTimeout(r, 2_000));
      await lat({ target: shelf, op: 'get', n: 1_000 * k, maxMs: 120_000, shelf: 10_000 }, 'GetTask (10,000 tasks in the session)');
      await lat(
        { target: shelf, op: 'list', n: 300 * k, maxMs: 120_000, shelf: 10_000, pageSize: 50 },
        'ListTasks, one page of 50 (10,000 tasks)',
      );
    }
    log(`profile workload done: ${workload.join('; ')}`);
  } finally {
    await loadgen?.stop();
    await ours?.stop();
    await nats.stop();
  }
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  const processes: ProfileReport['processes'] = {};
  for (const [role, pid] of Object.entries(pids)) {
    const f = files.find((x) => x.split('.').includes(String(pid)));
    if (!f) {
      log(`no profile for ${role} (pid ${pid})`);
      continue;
    }
    processes[role] = {
      ...(await summariseProfile(join(dir, f))),
      requests: `${sends} sends in the throughput parts plus the timed requests`,
    };
  }
  void SHELF;
  return { schema: 'shrooms-bench-profile/1', startedAt: new Date().toISOString(), mode: plan.mode, workload, guard, processes };
}
