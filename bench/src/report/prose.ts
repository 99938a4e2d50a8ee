/**
 * The reading of the numbers in REPORT.md: verdicts on the aims, what limits each figure, what the
 * profile shows, what changed and what we recommend. Written around the run's own numbers.
 *
 * Over 300 lines: it is the report's prose, section by section in the report's order; split, its
 * sections would only be read together again by markdown.ts.
 */
import type { Figure } from '../figures.js';
import type { ProfileReport } from '../profile/run.js';
import type { Row } from '../profile/summarise.js';
import type { BenchResult } from '../run.js';

const fmt = (x: number | null | undefined, digits = 2): string =>
  x === null || x === undefined ? '–' : Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(digits);
const v = (r: BenchResult, key: string, arm: 'floor' | 'reference' | 'ours') => r.figures[key]?.arms[arm]?.value ?? null;
const div = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);

function verdict(f: Figure | undefined): string {
  const x = f?.ratios.ours_reference;
  if (!f || x === null || x === undefined) return 'no figure';
  const met = f.better === 'lower' ? x <= 1 : x >= 1;
  if (met) return '**met**';
  return f.better === 'lower' ? `not met: ours takes ${fmt(x, 1)}× as long` : `not met: ours does ${fmt(x, 2)}× as many`;
}

/** What the concurrency-1 CPU figure says about the p50 (an older run has no such figure). */
function c1Cpu(r: BenchResult): string {
  const ours = v(r, 'cpu_ms_per_send_c1', 'ours');
  if (ours === null) return '';
  const by = (r.figures.cpu_ms_per_send_c1?.context?.byProcess as Record<string, number>) ?? {};
  const parts = Object.entries(by)
    .filter(([k]) => k.startsWith('ours: '))
    .map(([k, x]) => `${k.slice('ours: '.length).replace(/_/g, ' ')} ${fmt(x)}`)
    .join(', ');
  return `
  One at a time nothing overlaps, and the hops are not what takes the time: ours spends ${fmt(ours)} ms of CPU per
  send there (${parts}), the reference ${fmt(v(r, 'cpu_ms_per_send_c1', 'reference'))} ms, the floor
  ${fmt(v(r, 'cpu_ms_per_send_c1', 'floor'))} ms, against a p50 of ${fmt(v(r, 'send_blocking_c1_p50_ms', 'ours'))} ms: each process's work on the path, one after the other,
  is most of the latency — more per task than at concurrency 16, where one wake-up serves several.`;
}

export function aims(r: BenchResult): string {
  const c = r.run.plan.throughput.concurrency;
  const rows: [string, string][] = [
    ['send_blocking_c1_p50_ms', 'blocking SendMessage, p50'],
    ['send_blocking_c1_p99_ms', 'blocking SendMessage, p99'],
    ...c.map((n) => [`tasks_per_s_c${n}_blocking`, `tasks/s, concurrency ${n}, blocking`] as [string, string]),
    ...c.map((n) => [`tasks_per_s_c${n}_nonblocking`, `tasks/s, concurrency ${n}, non-blocking`] as [string, string]),
    ['sse_first_event_p50_ms', 'SSE first event, p50'],
    ['get_task_large_p50_ms', 'GetTask, large ledger, p50'],
    ['list_tasks_large_p50_ms', 'ListTasks, large ledger, p50'],
  ];
  const table = [
    '| figure | ours/reference | verdict |',
    '|---|---:|---|',
    ...rows.map(([k, label]) => `| ${label} | ${fmt(r.figures[k]?.ratios.ours_reference)}× | ${verdict(r.figures[k])} |`),
  ].join('\n');
  const getGrowth = div(v(r, 'get_task_large_p50_ms', 'ours'), v(r, 'get_task_small_p50_ms', 'ours'));
  const refGetGrowth = div(v(r, 'get_task_large_p50_ms', 'reference'), v(r, 'get_task_small_p50_ms', 'reference'));
  const listGrowth = div(v(r, 'list_tasks_large_p50_ms', 'ours'), v(r, 'list_tasks_small_p50_ms', 'ours'));
  const refListGrowth = div(v(r, 'list_tasks_large_p50_ms', 'reference'), v(r, 'list_tasks_small_p50_ms', 'reference'));
  const flat = getGrowth !== null && getGrowth <= 1.3;
  const small = r.run.plan.reads.small;
  const large = r.run.plan.reads.large;
  const gwSmall = (r.figures.rss_after_small_ledger_mb?.context?.ours_gateway as number | undefined) ?? null;
  const gwLarge = (r.figures.rss_after_large_ledger_mb?.context?.ours_gateway as number | undefined) ?? null;
  const perTaskKb = gwSmall !== null && gwLarge !== null ? ((gwLarge - gwSmall) * 1024) / (large - small) : null;
  const brStart = v(r, 'bridge_start_large_session_peak_rss_mb', 'ours');
  const brPeak = v(r, 'peak_rss_bridge_mb', 'ours');
  return `**1. Ours at least as fast as the in-memory reference — not met.**

${table}

The reference keeps tasks in a Map inside the one process that speaks HTTP; ours crosses NATS
between two processes and writes every change durably: ${fmt(v(r, 'nats_messages_per_blocking_send', 'ours'), 1)} NATS messages per blocking send
against the floor's ${fmt(v(r, 'nats_messages_per_blocking_send', 'floor'), 0)}: admission's window write (the gateway's compare-and-set on the window it
wrote last, one for several tasks while they come often: the places it reserves ahead), the delivery, and one bridge write for the whole task when the worker is quick — a blocking
send's create, start and result go together (its sender hears nothing before its end) — followed back to
the gateway by its ledger watch (a bridge that stores a new task sends no reply of its own)${
    r.run.natsUsers
      ? "; and, for nats-server's reply tracking (recommendation 15), an answer from each watch (the gateway's, the bridge's own) to the reply-to subject of that write's delivery and the bridge's later \"taken\" to the delivery it answered with nothing else (the answers of 50 ms leave in one socket write)"
      : ''
  }; the session
look-up and the resend check are answered from the gateway's memory. One session also does
one task at a time by design (a coding-agent session cannot do two things at once), so tasks/s for one
session is bounded by the bridge's serial section (one ledger write per task under its lock when the
worker is quick: a blocking send's create and start wait, up to 100 ms from its arrival, and go with its result).
The echo harness always answers within that; a model never does, and then the writes are as before
(create, start, result). ${spreadSentence(r)}
Per task ours spends ${fmt(v(r, 'cpu_ms_per_task', 'ours'))} ms of CPU across its processes and nats-server, the reference
${fmt(v(r, 'cpu_ms_per_task', 'reference'))} ms, the floor ${fmt(v(r, 'cpu_ms_per_task', 'floor'), 3)} ms: on a small machine that, not the wire, is what caps ours. ${listSentence(r)}

**2. GetTask flat from ${small.toLocaleString('en')} to ${large.toLocaleString('en')} tasks — ${flat ? 'met' : 'not met'}.** Ours' GetTask p50 is ${fmt(getGrowth)}× at the large
ledger what it is at the small one (reference: ${fmt(refGetGrowth)}×): one direct KV get of one key, whatever the ledger
holds. ListTasks (first page) is ${fmt(listGrowth)}× (reference: ${fmt(refListGrowth)}×): since this round the first page walks only
the page, not the session's history (it used to walk every task of the session to count them).

**3. Memory bounded by limits, not by history — partly.** The bridge's resident memory does not follow
history: it holds the open tasks of its session (peak ${fmt(brPeak, 0)} MB for the bench session). The gateway's
start-up does not either: it answers before reading anything of the ledger's history, keeps only the open tasks
of the machine (learnt in the background, for the expiry sweep), and builds a session's listing index when that
session is first listed or sent to (the memory job's figures). What it holds then follows the sessions in use: the
bench lists its ${large.toLocaleString('en')}-task session, so the gateway holds that session's index, ${
    perTaskKb !== null && perTaskKb >= 0.05
      ? `about ${fmt(perTaskKb, 1)} KB per
task here`
      : 'too little per task to show in its RSS here'
  } (RSS ${fmt(gwSmall, 0)} MB after ${small.toLocaleString('en')} tasks, ${fmt(gwLarge, 0)} MB after ${large.toLocaleString('en')}; a GC-noisy
measure), bounded by the ledger's retention (finished tasks kept a week) and its count: the ledger holds at most \`retainedTasks\` (200,000). A bridge starting on a
session with ${large.toLocaleString('en')} finished tasks reads them all once (peak ${fmt(brStart, 0)} MB, against ${fmt(brPeak, 0)} MB for a fresh one);
since this round it keeps only the open ones while it recovers. For contrast, the reference holds every
task in its own heap: ${fmt(v(r, 'rss_after_small_ledger_mb', 'reference'), 0)} MB after the small preload, ${fmt(v(r, 'rss_after_large_ledger_mb', 'reference'), 0)} MB after the large one (peak ${fmt(v(r, 'peak_rss_mb', 'reference'), 0)} MB). Ours keeps
task bodies in nats-server's file store (its process peaked at ${fmt(r.memory.peaksMb.nats_server ?? null, 0)} MB, shared with the floor), bounded by
the bucket's retention (a week) and its count limit (\`retainedTasks\`).`;
}

function spreadSentence(r: BenchResult): string {
  const key = Object.keys(r.figures).find((k) => /^tasks_per_s_c\d+_blocking_\d+_sessions$/.test(k));
  if (!key) return 'The full run also measures the load spread over several sessions.';
  const n = key.match(/_(\d+)_sessions$/)![1];
  const c = key.match(/^tasks_per_s_c(\d+)_/)![1];
  const spread = v(r, key, 'ours');
  const one = v(r, `tasks_per_s_c${c}_blocking`, 'ours');
  const gain = div(spread, one);
  if (gain !== null && gain >= 1.5)
    return `Spread over ${n} sessions, ours serves ${fmt(gain, 1)}× what one session does (${fmt(spread, 0)} against ${fmt(one, 0)} tasks/s).`;
  if (gain !== null && gain >= 0.8)
    return `Spread over ${n} sessions ours served ${gain >= 1 ? 'hardly' : 'no'} more here (${fmt(spread, 0)} against ${fmt(one, 0)} tasks/s for one): on this machine the CPU, not the session, was the limit.`;
  // Fewer over several sessions than over one: measured by `--hot --sessions 4` (recommendation 18), each
  // bridge then wakes for fewer tasks at a time and spends more CPU per task of its own.
  return `Spread over ${n} sessions ours served fewer here (${fmt(spread, 0)} against ${fmt(one, 0)} tasks/s for one): each session's bridge wakes for fewer tasks at a time, and a task can cost it up to three times the CPU it costs one busy bridge (recommendations 18 and 19); the repetitions' spread says how steady that was.`;
}

function listSentence(r: BenchResult): string {
  const x = r.figures.list_tasks_large_p50_ms?.ratios.ours_reference;
  if (x === null || x === undefined) return '';
  return x <= 1
    ? 'Ours does beat the reference on a ListTasks page over a large ledger: the reference sorts every task of the tenant on every call.'
    : `The reference's ListTasks sorts every task of the tenant on every call, so it grows with the ledger (see its large/small ratio under 2.); ours reads the page's tasks one direct get each, so at ${r.run.plan.reads.large.toLocaleString('en')} tasks ours is still ${fmt(x, 1)}× slower — the crossing point lies further out.`;
}

export function limits(r: BenchResult): string {
  const cpu = (key: string, arm: 'floor' | 'reference' | 'ours') => r.figures[key]?.arms[arm]?.loadgenCpuPct ?? null;
  const c = r.run.plan.throughput.concurrency;
  const hi = c[c.length - 1];
  const maxLg = Math.max(...Object.values(r.figures).flatMap((f) => Object.values(f.arms).map((a) => a?.loadgenCpuPct ?? 0)));
  return `- **The machine.** ${r.machine.cores} cores shared by every process of all three arms, nats-server and the load
  generator, and — during this run — by other people's work (${r.machine.noise.otherPct}% of the CPU). Absolute numbers
  move with that; the ratios hold better because the arms take turns within seconds of each other.
  Spreads (lowest–highest repetition) show how much each figure moved.
- **The load generator** is its own process (node:http, one keep-alive socket per request in flight, no
  retries). Its CPU stayed at or below ${fmt(maxLg, 0)}% of one core in every job (e.g. ${fmt(cpu(`tasks_per_s_c${hi}_nonblocking`, 'floor'), 0)}% driving the floor at
  concurrency ${hi}, ${fmt(cpu(`tasks_per_s_c${hi}_blocking`, 'reference'), 0)}% the reference), but on ${r.machine.cores} cores it competes with the arm it drives: the
  floor's and the reference's tasks/s are partly limited by the generator sharing their CPU. Ours is not
  (its generator CPU is a few %).
- **Blocking latency, ours:** four sequential NATS hops, each a wake-up of another process — the delivery
  (gateway to the bridge through nats-server), the bridge's one write and its echo to the gateway's watch —
  and, when the task finds no place reserved ahead (the first of a stream, or after a pause), two more for
  admission's compare-and-set on its window (gateway to nats-server and back); one or two JetStream
  file-store writes (no fsync per write in nats-server 2.9 by default, so the disk is not the limit).${c1Cpu(r)}
- **Tasks/s, ours, one session:** the bridge runs one task at a time and records create, start and complete
  with compare-and-set: a blocking send's create waits up to 100 ms for its next change, and a queued
  task's start and complete are one write when the worker answers within 100 ms (the echo harness always
  does; a model never does), so here a task is one write; concurrency only lengthens the queue. The non-blocking figure counts
  accepted tasks (the bridge's intake, serialised with the rest of the bridge); "until all finished" waits
  for the queue to drain.
- **Tasks/s, ours over several sessions:** one bridge per session, all on the same cores: each bridge wakes
  for fewer tasks at a time than one busy bridge does, so a task costs it more CPU. Before they are
  measured the added sessions are warmed up until each has served as many tasks as the first session had in
  its warm-up, so the figure measures their path, not V8 still optimising their code.
- **Tasks/s, reference:** one Node process doing HTTP, JSON-RPC, the executor and the store; CPU-bound.
- **SSE first event, ours:** the stream's first event is the task as the bridge took it, so it waits for
  the same admission and delivery as a blocking send, but not for the work. It is measured after the
  throughput phases. In a full run of 2026-12-04 (20:30 UTC) that also timed, for each arm, 5 × 200
  blocking sends and as many first events right after the warm-up and again just before this phase,
  every arm's first event came about when its blocking answer did, early and late alike — ours 1.55–1.98
  ms blocking and 1.56–1.91 first event at the start, 1.65–1.80 and 1.65–2.29 late; the reference
  0.72–0.93 and 0.70–1.08, then 0.75–1.11 and 0.74–0.78 — so this ratio is the blocking p50's (about
  2×) wherever it is taken, and meeting its aim takes what p50's takes. (An earlier run's SSE phase
  found ours slower than at its start; that did not recur.)
- **GetTask:** one KV direct get in ours (flat in ledger size); a Map lookup plus a structured clone in the
  reference. **ListTasks:** ours reads the page's ${r.run.plan.reads.pageSize} tasks with as many direct gets in parallel; the reference
  sorts all tasks of the tenant on every call.
- **Memory:** peak RSS (VmHWM from /proc) includes module loading and whatever heap V8 chose
  to keep; it is an upper bound, not live data. The memory job's idle figures are RSS after ${(r.run.plan.memory?.idleMs ?? 0) / 1000} s without work (its readings 5 s after a step are marked so). The gateway's growth with history is the listing index of the sessions it has listed or sent to.
${
  r.run.natsUsers
    ? `- **NATS permissions, ours:** its processes log in with the deploy's users, as under \`up\`, so nats-server checks
  each of their publishes and subscriptions (cheap) and, for every message it delivers with a reply-to
  subject to a user allowed to answer (a delivery, each change a watch brings), remembers that subject for
  the reply window (${r.run.natsUsers.replyWindow}). nats-server 2.9 walks all it remembers on every such message once it
  holds over 4,096: above ~${Math.floor(4096 / Math.max(1, parseInt(r.run.natsUsers.replyWindow, 10)))} unanswered a second per connection part of nats-server's CPU per task grows
  with the rate. The watches answer theirs and a bridge its quiet deliveries, together every 50 ms
  (recommendation 15), so a connection holds about 50 ms of them, not the window's.
`
    : ''
}- **How ours runs:** compiled, as people run it — the built \`shrooms-agent\` CLI, bundled (\`services/shrooms-agent/bundle\`,
  what \`./shrooms\` and the units run); \`pnpm bench\` builds first when a source changed. The reference, the
  floor and the load generator run from the compiled bench (\`bench/dist\`) too.
- **What is not measured:** clients on other machines (everything is loopback), a replicated (R3)
  ledger, real harnesses (the echo harness answers at once), and the full run's 100,000 tasks in the
  quick run.`;
}

function rows(list: Row[], n: number): string {
  return list
    .slice(0, n)
    .map((x) => `${x.name.replace(/\|/g, '\\|')} ${x.pct}%`)
    .join('; ');
}

export function profileFindings(p: ProfileReport): string {
  const out: string[] = [];
  out.push(`From \`pnpm bench --profile\` (${p.startedAt.slice(0, 16).replace('T', ' ')} UTC): ours alone under the V8 sampling profiler, driven through
${p.workload.join('; ')}. Shares are of each process's busy (non-idle) time, start-up included.
`);
  out.push('| process | busy ms | by area (self time) |', '|---|---:|---|');
  for (const [role, s] of Object.entries(p.processes)) out.push(`| ${role} | ${s.activeMs.toLocaleString('en')} | ${rows(s.byArea, 8)} |`);
  out.push('');
  for (const [role, s] of Object.entries(p.processes)) out.push(`- **${role}**, top self time: ${rows(s.topSelf, 10)}.`);
  const gw = p.processes.gateway;
  const share = (name: string) => gw?.topSelf.filter((x) => x.name.startsWith(name)).reduce((a, b) => a + b.pct, 0) ?? 0;
  out.push(`
What the profile says is avoidable:

- **An Error with a stack trace per NATS request** (${fmt(share('RequestError') + share('TimeoutError'), 1)}% of the gateway's busy time in \`RequestError\` and
  \`TimeoutError\` constructors). nats.js builds both up front for every request so that a failure
  shows the caller's stack; the connection option \`noAsyncTraces: true\` (in \`connectNats\` since) turns
  that off, and the \`RequestError\` it still made after every reply is patched away since 2026-12-02
  (recommendation 9): a profile taken after that shows none.
- **One socket write per message** (\`writeBuffer\`/\`writev\` lead the self time of every process). Each
  request is flushed on its own; fewer round trips per task is the way to fewer writes, which is
  what the changes below do. Batching inside nats.js would need a client change.
- **Decoding whole tasks to look at their state**: \`KvEntry.json()\` on every watched and read entry (the
  gateway decodes each change of every task of the machine to keep its index). A listing index that
  needs only state, context and times could be fed from a smaller value (recommendation 10).
- **The listing index walk** (\`page\` in task-index) was the gateway's largest function of our own code
  before this round; it is now bounded by the page.
- **Module loading under tsx** is a start-up cost only (compileSourceTextModule, the esm hooks), not in
  the steady state.`);
  return out.join('\n');
}

export function changes(): string {
  return `Since (2026-12-06): a listed session's tasks take a third less of the gateway's memory. Once a session is
sent to or listed, the gateway keeps every retained task of it in its listing index (a send looks its
message's id up there to tell a resend), up to the ledger's 200,000 by default. A heap snapshot of a gateway that had listed 100,000 tasks held
42 MB of index: each key a slice of the subject its watch message came with (keeping the whole subject), each
state a copy of its string from the task's JSON, each slot's fields spilling into a property array of its own,
and two fields nobody read. Now a slot is an object of one class with every field in it, one string for
each state and the key a string of its own (\`libs/ledger/src/task-index.ts\`): 428 → 276 bytes
of heap per task on Node 20, 22 and 24 (a UUID for its id and context; a test holds it under 300). The
memory job (\`pnpm bench --memory\`, 2026-12-06 02:02 UTC) against the full run of 2026-12-05 23:09, Node 20 /
22 / 24: the gateway on 100,000 retained tasks once that session is listed 144 / 151 / 236 → 130 / 132 / 184 MB,
and after 90 s without work 106 / 114 / 136 → 93.8 / 99.0 / 112. The transient left after a listing is still
the start-up pass's kind (V8's young generation grown by decoding every task once, given back after a quiet
spell). In the same change \`@shrooms/testing\`, which \`up\` imports for its local nats-server and keeps for as
long as the mesh runs, loads nats.js and \`node:http\` where they are used rather than on import (\`up\`'s own
process on Node 22: 78.5 → 75.7 MB; → 72 since \`up\` reads GATEWAY_GUARD's rule from \`@shrooms/protocol\` instead of
loading the whole gateway for it). The memory job's other figures moved within the noise. After that
run, the same for the dashboard: while a page is open the gateway keeps a row for every retained task,
and each kept its key's subject and copies of its state and of the machine, session and device names it
repeats; with its key a string of its own and those texts shared, 1,244 → 950 bytes of heap a row
(\`services/gateway/src/dashboard/dashboard-memory.test.ts\`; not in the memory job, which opens no page),
and → 730 with the search's lower-cased copy of each row's name, text and asker no longer kept: a search
tests the row's own texts (a case-insensitive pattern made once per query; 200,000 rows in ~25 ms here,
against ~8 ms with the copies).

Before that (2026-12-05, night): Node's TLS and HTTP/2 stacks are loaded only where a connection or a server
uses them. The NATS transport required \`node:tls\` when it loaded and asked \`instanceof TLSSocket\` of every
server INFO, and fastify's server module required \`node:https\` and \`node:http2\`, so every process held
them on plain connections (a bare Node 22.23.3 that loads https and http2 holds 4.6 MB more). Both are
patched (\`patches/\`): the transport loads tls on its first TLS connection and tells an encrypted socket by
its \`encrypted\` flag; fastify loads each where it makes an https or http2 server (tests on a real
nats-server requiring TLS and a real https server: both still work, and plain ones load neither). \`up\`'s
processes on Node 22.23.3 after 70 s idle, two starts each alternated (RSS, MB): bridge 68 / 68 → 66 / 67,
scheduler 67 / 66 → 63 / 64 (the transport); gateway 73 / 72 → 69 / 69 (fastify). Nothing else changed.
The full run in this report (23:09 UTC, on these changes; nothing on the path changed) read the idle bridge
at 58.6 / 66.4 / 65.5 MB on Node 20 / 22 / 24 (the 20:08 run: 58.5 / 68.9 / 67.2), the gateway 62.3 / 70.2 /
72.9 (62.6 / 73.2 / 74.9), the scheduler 56.9 / 63.9 / 62.5 (57.4 / 66.2 / 65.1); on Node 20, where those modules
cost less (https and http2 in a bare process: 1.7 MB against 4.6 on Node 22), neither moved beyond the noise. Its path figures moved with the machine's hour: the
reference spent 0.557 ms of CPU per task against 0.441 at 20:08, ours 1.18 against 1.02 (repetitions
1.12–1.43); ours' SSE first event was its quickest yet (1.31 against 1.43 ms) but the reference's was quicker
still (0.541 against 0.740), so that ratio read 2.41×, not met — 1.43×, 1.93× and 2.41× in the last three full
runs: it sits on its line as the blocking p50's does (recommendation 22).

Before that (2026-12-05, stop 47): admission takes loop-guard places reserved ahead
(\`libs/admission/src/window/ahead.ts\`). Its compare-and-set on the window was a round trip to nats-server
on the path of every new task, before the delivery could leave (\`--admission off\`, two pairs alternated
that day: p50 1.19 / 1.28 → 0.88 / 1.11 ms, CPU per task 0.98 / 1.03 → 0.75 / 0.78 ms). Now, when new tasks
for one window come faster than one a lease (a tenth of the window, at most a second), a window write also
reserves a few places (\`~place:…\` entries timed at the lease's end); the next tasks take them from memory
and a later write puts their ids in them. The guard stays exact — a place is counted by every admitter from
the write that made it, a task in one stays in the window at least as long as if written when admitted, and
the last places of a window are still decided one compare-and-set at a time (docs/reliability.md, "The loop
guard"). \`--hot\`, four pairs alternated, medians without → with: p50 1.48 → 1.16 ms, SSE first event 1.60
→ 1.17 ms, CPU per task 1.10 → 0.99 ms, tasks/s 1,381 → 1,552, NATS messages per send 6.16 → 5.33; over
four sessions (six pairs) tasks/s about the same or a little more, nats-server's writes per task 4.8 → 4.5.
The full run of that day at 12:32 UTC met the SSE aim for the first time (1.43×) and read ours faster than
the run before it (p50 1.25 against 1.36 ms, CPU per task 1.08 against 1.16), yet its ratios for p50 and
tasks/s are lower: the reference ran faster in this hour (p50 0.528 against 0.680 ms, 2,378 against 1,876
tasks/s at concurrency 16), as did the floor. Two memory figures moved with the machine, not the code: the
gateway flat in retained tasks on Node 20 read 1.54× (the four full runs before, 1.21–1.24) because its idle
reading on 100,000 tasks equals its reading at 5 s (105 MB both): no collection ran in its quiet minute, so
the garbage of its start-up pass was still held; on Node 22 and 24 the same reading fell (1.03×, 1.00×).
The full run of 20:08 UTC (on the guard's changes of stop 48 — inspected windows, the admit
rate counted once a write is stored; nothing else on the path) read ours about the same: p50 1.19 ms
(2.27×), CPU per task 1.02 ms, 5.1 NATS messages per send; its SSE first event took longer for ours (1.43
against 1.11 ms) and for the floor (0.64 against 0.44 ms, code untouched), so 1.93× was still met; and the
gateway on Node 20 read 1.23×, met this time because a collection happened to run in its quiet minute
(recommendation 22).

Before that (2026-12-05, evening): the bundle every process runs (\`scripts/bundle.mjs\`) asks Node for its own
modules (\`process.getBuiltinModule\`) instead of importing them. On Node 22 and 24 an ESM import of one of
them builds its ESM face by reading every export, which runs the lazy ones: \`node:http\`'s \`WebSocket\`
loaded undici, with http2, zlib and worker threads, into every process, and \`node:process\`, \`node:fs\` and
\`node:util\` what their getters stand for (those four alone: 56.8 MB imported against 46.0 MB asked on Node
22.23.3, 58.8 against 45.0 on 24.21.0; Node 20 builds its faces lazily). The real \`require\` each file of the
bundle carried is made on its first call, so the 60-odd createRequire calls at start-up went too. \`up\`'s
processes after 90 s idle, two runs of each bundle (RSS, MB): Node 22 bridge 72 → 68, gateway 76 → 73,
scheduler 70 → 66; Node 24 bridge 70–71 → 67–68, gateway 75 → 73–74, scheduler 68 → 65 (recommendation 21).

Before that (2026-12-05, later): the memory job reads each idle process's private memory beside its RSS
(Private_Clean + Private_Dirty of its smaps_rollup): RSS counts the pages of the \`node\` binary, which every
Node process of the machine shares, and on Node 22 and 24 those are most of an idle process's RSS
(recommendation 21). Its gateway start-up figure (the median of three starts) now stops each start only
once its open tasks are known: one run read 402 / 513 / 514 ms on 100,000 tasks against 361 on 10,000 (the
flatness aim not met on Node 20), the next 361 / 349 / 375 — the later starts likely began beside the earlier
one's background read still going on nats-server. Nothing on the path changed; recommendations 10 and 16 were
measured and weighed again, and are not built (their entries say why).

Before that (2026-12-05): the admission window's stored form is joined from each entry's JSON, made once
(a window is written whole on every admit, and all but its newest entries were in the window before).
Measured with its UTF-8 encoding, per write: 30 ids 12 → 3 µs, 1,000 ids (the most a raised limit may be)
330 → 92 µs; in \`--hot\` runs alternated (three each) CPU per task 0.97–1.13 → 0.99–1.03 ms and tasks/s
within the noise at the bench's ~150-id window, so it is for raised limits, not an aim
(\`libs/admission/src/window/window.ts\`). The memory job also reads the gateway after a quiet spell once its
largest session is listed (the figure "listed, then idle"): whether V8's memory reducer runs again after
the listing's collections differs from run to run on Node 24 (two quick runs: 121.9 → 121.9 and 118.9 → 95.3 MB);
the full run of 2026-12-05 read 146 → 108, 159 → 124 and 278 → 145 MB on Node 20, 22 and 24 (100,000 tasks).

Before that (2026-12-04, late night), on Node 24, which the full run now measures the memory job on too
(\`--node\`): V8 13.1 and later read a zero allocation rate on the embedder's C++ heap (cppgc, where a
process that never uses \`node:vm\` allocates nothing) as the highest rate, so the memory reducer never
ran in our processes ("high alloc" at every 8 s tick, \`--trace-gc --trace-memory-reducer\`): each kept
the young generation its start-up grew (16 MB; 2 MB on Node 20) until the reducer's 100 s watchdog, or
for good when another collection came first.

| change | where | measured | before → after (Node 24.21.0) |
|---|---|---|---|
| Every command of the CLI compiles a trivial \`vm.Script\` at its start and every 30 s (an unref'd timer; from V8 13.1 only): Node allocates it on cppgc, the rate is no longer exactly 0, and the reducer runs as on Node 22 — reducing collections 8 s after start-up. | \`libs/runtime/src/idle-memory.ts\`, \`services/shrooms-agent/src/main.ts\` | the memory job run on Node 24.21.0 (full plan: 90 s idle), the tree before and after | idle RSS: gateway 88.9 → 75.7, bridge 78.7 → 71.3, guard 75.5 → 67.5, scheduler 75.9 → 68.2 MB; the gateway on 10,000 / 100,000 retained tasks, idle, 103.9 / 125 → 88.5 / 104.9 MB; once its 100,000-task session is listed 272.6 → 257.6 MB |

What is left is the newer Nodes' own, on Node 22 as on 24 (the idle bridge 71–73 MB against Node 20's 59; the
gateway 77 against 63; an idle \`node\` process with nothing loaded 2–3 MB more): on Node 24 its binary's pages
(4 MB more of \`node\` resident), a trusted space (3 MB) and a larger live heap for the same code (old space 10.7
against 9.7 MB), the young generation back at 1 MB. The bridge's aim is met on Node 20 only.

Before that (2026-12-04, night), on Node 20, where the bench runs: a heap snapshot of a gateway that had served
130,000 tasks held 142,000 hidden classes and 133,000 descriptor arrays, 42 MB of its 112 MB live heap.
On Node 20 (V8 11.3) an object spread that adds a field (\`{ ...base, extra }\`) gives every copy a hidden
class of its own; Node 22 and 24 share one.

| change | where | measured | before → after (Node 20) |
|---|---|---|---|
| The listing index's slot is made with \`withFields\` instead of a spread (at first written out field by field: 425 bytes per task, 460 now). | \`libs/ledger/src/task-index.ts\` | 100,000 tasks in one session, heap after a full GC; a filtered page (a status no task has) | heap per task 1,098 → 425 / 460 bytes; upsert 3.0 → 1.5 µs; the filtered page 27–29 → 0.5–0.6 ms; the memory job's gateway once its 100,000-task session is listed 178 → 139 MB RSS (10,000: 92 → 80 MB) |
| Copies made once per task or request (the quiet delivery, a new task's message and metadata, the held create, the bridge's intake result, the traceparent metadata) are made with \`withFields\` (Object.assign into a new object). | \`libs/protocol/src/objects.ts\` and its callers | a micro-benchmark of a delivery-sized object made and JSON-encoded; \`pnpm bench --hot\`, three runs each alternated | 4.7–5.5 → 1.6–1.8 µs per object; CPU per task 1.07–1.35 → 1.08–1.34 ms (the noise) |

Before that (2026-12-04, evening and night), measured where it acts, at concurrency 16 on one session: \`pnpm bench --hot\`,
the commit before and the commit alternated three times on this machine:

| change | where | tasks/s at c16 | CPU ms per task (gateway / bridge / nats-server; all) | NATS messages per send |
|---|---|---|---|---|
| A bridge answers a delivery it takes quietly (the gateway learns of the task from its ledger watch) with a bare "taken", in the same 50 ms batches as the watches' answers, when the delivery says its sender passes it over (a gateway from before is sent nothing): nats-server had kept each such reply-to subject for the 5 s window, more than 4,096 of them above ~800 tasks a second, and then walked them all at each message to the bridge (recommendation 15). The gateway passes the answer over. | \`libs/runtime/src/service.ts\`, \`answers.ts\` | 967 969 966 → 1,058 1,047 1,073 | 0.61–0.64 / 0.44–0.47 / 0.39–0.47; 1.50–1.56 → 0.63 / 0.45–0.46 / 0.34–0.37; 1.42–1.45 | 5.07–5.16 → 6.14–6.24 |
| The gateway follows a blocking wait's client by a listener on its socket instead of an AbortController per request (only a blocking send's wait used it). | \`services/gateway/src/tasks/live.ts\`, \`a2a/caller.ts\` | not measured apart: a micro-benchmark of what each request did, ~6 → 0.2 µs warm and ~20 → 2 µs at one call every 2 ms (Node 20) | \`createAbortSignal\` had been 1.5 % of the gateway's self time at concurrency 16 | unchanged |
| A new task's stored creation event names the task (id, context, status) instead of carrying a whole copy of it: every stream sends the task first from its own read and passes that event over, so nobody read the copy, a sixth or more of a task asked and finished in one write (2,235 → 1,918 bytes for a one-word echo). | \`libs/ledger/src/transitions.ts\` | 1,083 1,329 1,255 → 1,259 1,222 1,201 (the noise) | all: 1.41 1.15 1.24 → 1.21 1.27 1.28 (the noise) | unchanged |

The round before (2026-12-04), measured where it acts, at concurrency 1: the first change by an A/B —
3,000 blocking sends one at a time, three times per variant, the commit before and the commit alternated on
this machine, CPU per send from each process's clock ticks; the others, too small for that on a machine
this noisy, by a CPU profile of 3,000 such sends before and after (\`pnpm bench --profile --phase c1 --quick\`):

| change | where | blocking p50 at c1 | CPU ms per send at c1 (gateway / bridge / nats-server) | at c16 |
|---|---|---|---|---|
| A watch's answers to the reply-to subjects of its deliveries (recommendation 15) leave together: those gathered within 50 ms (at most 512) in one socket write, instead of one write in the gateway and the bridge and one read by nats-server per task. At concurrency 1 each answer woke nats-server while the next send was on its way. | \`answers.ts\` (now in libs/runtime), libs/ledger \`watch.ts\` | 2.34 2.67 2.76 2.34 2.47 2.29 → 2.64 1.98 2.07 2.09 1.90 1.88 ms | 1.17–1.35 / 0.73–0.88 / 0.83–0.92 → 0.93–1.23 / 0.57–0.78 / 0.60–0.78 | tasks/s and CPU per task unchanged within the noise (\`--hot\`, three runs each); the gateway's write calls per task 1.86–1.93 → 1.56–1.66, nats-server's reads 3.75–3.80 → 3.19–3.33 |
| A peers map answers a source address it was asked before from memory (every request is identified twice, by its door and for its caller; the address was parsed into a BigInt each time). | \`services/gateway/src/identity/peers.ts\` | not measured apart | the identify frames in a c1 profile: 65 → under 15 ms per 3,000 sends | — |
| The signal field checks a followed signal once, as the watch brings it, instead of on every look-up (the gateway looks the session and the caller up on each send). | \`libs/ledger/src/signals.ts\` | not measured apart | \`SignalField.get\` 88 → 35 ms per 3,000 sends | — |
| A key token of plain characters is encoded and decoded without walking it character by character. | \`libs/protocol/src/names.ts\` | not measured apart | the gateway's \`sessionOfKey\` 40 → under 15 ms, the bridge's \`encodeToken\` 28 ms, per 3,000 sends | — |

Before that (2026-12-03, afternoon), each in its own commit, \`pnpm bench --hot\` alternated with
the commit before on this machine (two or three runs each):

| change | where | CPU ms per task (ours + nats-server) | tasks/s, 1 session, c16 | blocking p50 at c1 |
|---|---|---|---|---|
| A watch with initial values follows the changes with a deliver-new consumer, subscribed first, and reads the initial values with a second one stopped once they are in. nats-server 2.9 recounts a last-value-per-subject consumer's pending messages over every subject of its filter on each message it delivers once caught up, so the bridge's session watch (and the dashboard feed) cost more the longer the ledger; the next change's one write per task hit that on every message (471 → 256 tasks/s over five repetitions, nats-server 2.9 ms of CPU per task, its profile led by \`SubjectsState\`). | \`libs/ledger/src/watch.ts\` | 1.09 / 1.12 → 1.08 / 1.13 (unchanged on today's write pattern) | 1,455 / 1,408 → 1,452 / 1,372 | 1.75 / 1.78 → 1.71 / 1.76 ms |
| A blocking send's new task (its sender hears nothing before its end; the gateway marks the delivery \`awaited\`) is created up to 100 ms late, with its next change: a quick worker's create, start and result are one write. | \`libs/ledger/src/deferred.ts\`, \`known.ts\`, \`ledger.ts\` (\`deferCreate\`), \`services/session-bridge/src/bridge/intake.ts\`, \`services/gateway/src/tasks/service.ts\` | 1.08 / 1.13 → 0.93 / 0.91 (gateway 0.45 → 0.40, bridge 0.35 → 0.29, nats-server 0.29 → 0.23); NATS messages per send 4.02 → 3.02 | 1,452 / 1,372 → 1,660 / 1,707 | 1.71 / 1.76 → 1.59 / 1.57 ms |

The round before (2026-12-03, later), each in its own commit, \`pnpm bench --hot\` alternated with the
commit before on this machine (three runs each; the first as \`--quick\`, six runs):

| change | where | CPU ms per task (ours + nats-server) | tasks/s, 1 session, c16 | blocking p50 at c1 |
|---|---|---|---|---|
| The local nats-server (\`up\`, the bench, the tests) runs with GOMAXPROCS 1 unless the environment says otherwise: a second Go processor only hands each message between threads. | \`libs/testing/src/nats-server.ts\` (\`NATS_SERVER_ENV\`) | nats-server 0.593 / 0.570 / 0.556 → 0.459 / 0.431 / 0.448; all 1.97 → 1.73–1.83 | within the noise | within the noise |
| A queued task's start (SUBMITTED → WORKING) waits up to 100 ms to be written and goes with the task's next change — for a quick worker its result — in one write carrying both events; the session works on it from the start. | \`libs/ledger/src/deferred.ts\`, \`ledger.ts\` (\`deferTransition\`), \`services/session-bridge/src/bridge/turns.ts\` (\`begin\`) | 1.58 / 1.69 / 1.61 → 1.19 / 1.23 / 1.22 (gateway 0.63 → 0.49, bridge 0.55 → 0.41, nats-server 0.45 → 0.32) | 984 / 893 / 943 → 1,311 / 1,258 / 1,227 | 1.88 / 1.88 / 1.84 → 1.76 / 1.88 / 1.81 ms |

The round before (2026-12-03, morning): **pipelined intake re-landed** (\`services/session-bridge/src/bridge/intake.ts\`,
\`view.ts\` \`reserve\`, \`recovery.ts\`), now that the test failure it was reverted for is explained. The
failure was a race in the turn loop that pipelining only made likelier: a task expired (or canceled)
between its start and its turn reaching the harness was sent to the harness anyway, and held the
session until it expired in turn; the same expiry test failed about 1 run in 7 without pipelining. The
turn loop now sends no turn for a task no longer current (\`bridge/turns.ts\` \`run\`). \`pnpm bench --hot\`
alternated three times each, the commit before and the commit, on this machine:

| change | CPU ms per task (ours + nats-server) | tasks/s, 1 session, c16 | blocking p50 at c1 | SSE first event |
|---|---|---|---|---|
| Pipelined intake again | 1.97 / 1.93 / 1.97 → 1.66 / 1.61 / 1.67 (gateway 0.68 → 0.60, bridge 0.62 → 0.52, nats-server 0.65 → 0.53) | 821 / 833 / 832 → 997 / 1019 / 989 | 1.96 / 1.89 / 1.92 → 1.87 / 1.89 / 1.89 ms | 1.55 / 1.55 / 1.56 → 1.54 / 1.55 / 1.52 ms |

The round before (2026-12-02, evening), each in its own commit, measured with \`pnpm bench --hot\` (ours
alone: blocking p50 at c1, tasks/s and CPU per task on one session at c16) alternated between the two
variants on a quiet machine; two runs each:

| change | where | CPU ms per task (ours + nats-server) | tasks/s, 1 session, c16 |
|---|---|---|---|
| The bridge skips its own writes in its session watch: recognised by revision once acknowledged, or by their bytes while the write is in flight (the echo nearly always overtakes the ack), held back until the write ends and passed on only if it did not end as that revision. Its spans follow its writes as they are acknowledged. | \`libs/ledger/src/own-writes.ts\`, \`ledger.ts\` (\`watch\` \`ownWrites: 'skip'\`, \`followWrites\`), \`services/session-bridge/src/bridge/bridge.ts\` | bridge 0.848 / 0.832 → 0.775 / 0.757 | 626 / 639 → 653 / 673 |
| Pipelined intake: a new task that waits is written outside the bridge's lock; its place in the room is held while it is written, and a task touched meanwhile is read again before it is queued. **Reverted after this run** (see below), re-landed in the latest round (above). | \`services/session-bridge/src/bridge/intake.ts\`, \`view.ts\` (\`reserve\`), \`recovery.ts\` | 2.40 / 2.44 → 2.09 / 2.04 | 653 / 673 → 796 / 809 |
| Task transitions copy the task shallowly instead of deep-cloning it (each already replaces what it changes). | \`libs/ledger/src/transitions.ts\` | bridge 0.681 / 0.653 → 0.597 / 0.602 | 755 / 763 → 816 / 807 |
| Admits for one window that arrive while it is busy are settled as one batch in one compare-and-set (an answer decided on an unwritten addition is decided again after the write). | \`libs/admission/src/window/store.ts\` | 1.92 / 1.94 → 1.83 / 1.83 | 855 / 836 → 889 / 899 |
| nats.js flushes its outbound buffer once per turn of the event loop (\`setImmediate\`) instead of per microtask, so the writes that answer one read of the socket leave in one socket write; \`close()\` still sends what was published. | \`patches/@nats-io__nats-core@3.4.0.patch\` | 1.80 / 1.82 → 1.71 / 1.71 | 904 / 907 → 953 / 970 |
| The session queue inserts by binary search and keeps its keys in a set (it sorted itself on every add). | \`services/session-bridge/src/bridge/queue.ts\` | — (3.3 % of the bridge's busy time in the 64-at-once profile phase) | — |

Pipelined intake was reverted after that round's full run: with it the expiry test of
test/e2e/limits.test.ts failed in 2 of 2 whole e2e runs (a task sent right after two expired ones
stayed queued until it expired too) and passed without it; the cause was found the day after (above). The full run of
2026-12-02, 21:32 UTC was of the tree without it, after one more fix on the bridge's side that costs
nothing on the hot path (a task the gateway queued is taken up even when the read that follows its
watched change lags behind it; a WORKING task nobody runs is queued again): one session at c16 does
0.28× the reference's tasks/s against 0.33× with pipelined intake in the run before, and CPU per task is
1.94 ms against 1.78 ms. The full run at the top of this report (2026-12-03) is of the tree with it.

Blocking p50 and the SSE first event at c1 did not move with any of them (1.91–2.06 ms and 1.60–1.68 ms in
every variant): they are three ledger round trips in a row, not CPU. Against the tree before the round,
alternated the same way: p50 2.01 / 2.02 → 1.94 / 1.99 ms, SSE first event 1.66 / 1.71 → 1.65 / 1.63 ms,
tasks/s 663 / 643 → 835 / 865, CPU per task 2.38 / 2.44 → 1.95 / 1.89 ms.

The round before, each in its own commit with the figures of one \`pnpm bench --quick\` before and after;
messages per blocking send counted by the nats-server's per-connection counters, which the machine's
noise does not move (it moved the latencies: other work took 43–70% of the CPU during those runs):

| change | where | NATS messages per blocking send |
|---|---|---|
| The gateway follows its machine's signals with one KV watch; a live signal is answered from memory, a miss or a faded one is still read (a bridge that just started is never refused for the watch's lag). | \`libs/ledger/src/signals.ts\` (\`follow\`), \`services/gateway/src/app.ts\` | 12.05 → 11.07 (gateway 4 → 3) |
| A new task's resend check is the gateway's listing index: a key it never saw (its initial values in) costs no read; a resend racing its first send meets it in the bridge's intake, which now refuses an id reused for other content too (\`assertResend\`), and the guard counts one task id once. | \`services/gateway/src/tasks/service.ts\` (\`submit\`), \`tasks/live.ts\` (\`mayExist\`), \`libs/ledger/src/intake.ts\` | 11.07 → 10.07 (gateway 3 → 2) |
| The bridge's intake begins a new task's span before the create and lets the create tell a new task from a resend, instead of reading the key first. | \`services/session-bridge/src/bridge/intake.ts\`, \`tasks/spans.ts\` | 10.07 → 9.07 (bridge 5.07 → 4.07) |
| A new task for a free session (nothing current or queued, harness idle, not held) is stored WORKING in one write (\`transitions.newStarted\`) and becomes the current task under the same lock. A non-blocking send to a free session answers WORKING instead of SUBMITTED. | \`libs/ledger/src/transitions.ts\`, \`services/session-bridge/src/bridge/intake.ts\`, \`bridge/turns.ts\` | 9.07 → 8.09 (bridge 4.07 → 3.08) |

This session, each in its own commit; the counts from an A/B of ours alone (the commit before and the
commit, alternating, one nats-server each, 200–300 blocking sends for the counts, 1,500 at concurrency 16
for the CPU, on the loaded machine):

| change | where | NATS messages per blocking send | CPU ms per task (ours + nats-server) |
|---|---|---|---|
| The guard adds to the window it wrote last (value and revision remembered, at most 1,024 keys) without reading it first; the compare-and-set checks the revision, so a window another replica has replaced costs one refused write and the usual read, never a wrong count; a refusal or an "already admitted" seen in memory is read again before it is answered. | \`services/guard/src/window/store.ts\` | 8.09 → 7.07 (guard 3 → 2) | 2.84 / 2.79 → 2.67 / 2.52 |
| A new task's delivery is quiet: a bridge that creates the task sends no reply, and the gateway takes the stored task from its ledger watch (same device and content; a refusal, an error or a resend is still answered; no reply and nothing seen within the delivery ack limit is BRIDGE_UNAVAILABLE as before). | \`libs/runtime/src/service.ts\` (\`NO_REPLY\`, \`quietRequests\`), \`libs/client/src/nats/bridge.ts\`, \`services/gateway/src/tasks/service.ts\` (\`deliverNew\`), \`services/session-bridge/src/endpoints.ts\` | 7.07 → 6.07 (bridge 3.05 → 2.05) | 2.71 / 2.82 / 2.65 → 2.33 / 2.38 / 2.38 |

2026-12-02, each in its own commit, measured with \`pnpm bench --hot --quick\` (ours alone) alternated
between the two variants on a machine loaded by a test run (load 4–5), which raises every CPU figure
about 2.5× over a quiet run's; the medians of four runs each:

| change | where | NATS messages per blocking send | CPU ms per task (ours + nats-server) |
|---|---|---|---|
| nats.js no longer builds a \`RequestError\` (and its stack) for every request that got its reply: a \`pnpm patch\` of @nats-io/nats-core 3.4.0's \`RequestOne.resolver\` leaves the mux without \`cancel()\` once settled (recommendation 9). | \`patches/@nats-io__nats-core@3.4.0.patch\`, its test \`libs/runtime/src/nats-core-patch.test.ts\` | 6.14 → 6.14 | 11.34 → 10.55 (−7%) |
| The v0.3 translation moves from libs/protocol into the gateway, the one process that serves v0.3: every other process loads two zod schema sets fewer. | \`services/gateway/src/v03/\` | — | — (idle bridge RSS about 0.3 MB less) |

Later the same day, the admission hop (recommendation 11), measured the same way with \`pnpm bench
--hot --quick --admission service\` against \`--admission local\`, alternated three times (load 2.2–2.8):

| change | where | NATS messages per blocking send | CPU ms per task (ours + nats-server) | blocking p50 / tasks/s at c16 |
|---|---|---|---|---|
| The gateway admits new tasks in its own process (\`GATEWAY_GUARD=local\`, the default; \`up\` starts no guard): libs/admission over the same KV windows, compare-and-set as before, so the count stays exact with any mix of gateways and guard replicas. No request to a guard, no reply, no third process per new task. | \`libs/admission/\` (moved from services/guard), \`services/gateway/src/tasks/guard.ts\` (\`localGuard\`) | 6.07 → 4.06 (the guard's request and reply) | 6.19 / 6.15 / 6.04 → 4.79 / 5.00 / 5.07 (−19 %; the guard's 0.67–0.75 gone, nats-server 1.85–2.02 → 1.52–1.59) | 6.62 / 5.84 / 5.46 → 3.84 / 4.09 / 3.81 ms; 232 / 261 / 233 → 334 / 323 / 307 |

Tried then and not kept: **pipelined intake** (the create outside the bridge's lock, only the queue
update under it). Ours alone, 3 alternating runs each on the loaded machine (load average 28): one
session's non-blocking accepted rate 85–219 tasks/s with it against 140–285 without — measured again on
a quiet machine in the round after (see there).

The round before:

Each kept behaviour identical and ran the affected tests (\`vitest --project unit services/gateway
services/session-bridge libs/ledger\`, \`--project e2e test/e2e/a2a-sdk.test.ts test/e2e/restart.test.ts
test/e2e/a2a-errors.test.ts\`). Counted with the nats-server's per-connection counters over 200 blocking
sends (a measure the machine's noise does not move):

| change | where | effect per blocking send |
|---|---|---|
| A transition right after this process's own write tries the compare-and-set from the bytes it wrote instead of reading the task first; anything short of a clean write (refused update, a change that declines or refuses) falls back to the usual read, so the decision is never taken on a remembered value. At most 1,024 keys remembered, as bytes. | \`libs/ledger/src/ledger.ts\` (\`transition\`, \`create\`) | bridge: 2 KV reads fewer (start and complete follow its own create); its serial section goes from 5 to 3 round trips per task |
| A blocking send listens before it submits and starts its wait from the entry the submit returned, instead of reading the ledger again after submitting. | \`services/gateway/src/tasks/service.ts\` (\`send\`), \`tasks/live.ts\` (\`waitFor\` takes the first read as a parameter) | gateway: 1 KV read fewer |
| \`submit\` no longer looks the session up a second time: both A2A send methods do it before anything else. | \`services/gateway/src/tasks/service.ts\` (\`submit\`) | gateway: 1 KV read fewer, on the critical path |
| An unfiltered ListTasks page walks only the page and counts with the index's size. | \`libs/ledger/src/task-index.ts\` | ListTasks first page no longer grows with the session's history |
| A bridge starting on a session keeps only its open tasks while it recovers (finished ones were held, then ignored). | \`services/session-bridge/src/bridge/bridge.ts\` (\`start\`) | start-up memory follows open tasks, not history |

Net: the gateway publishes 5 messages per blocking send instead of 7 and receives 8 instead of 10;
the bridge 5.2 instead of 7.2 (and receives 8.1 instead of 10.1). With the machine as busy as it was,
a before/after A/B of ours alone (3 alternating runs each) moved blocking p50 within the noise and
the one-session drain rate from 51–93 to 109–129 tasks/s.

Two observable details: a blocking send's 10-minute wait now also covers the (≤ 5 s) delivery, and a
client that goes away while its task is being delivered ends the wait right after the delivery
instead of at the task's end — nobody reads that answer.`;
}

export function recommendations(r: BenchResult, p?: ProfileReport): string {
  void r;
  const share = (role: string, name: string) =>
    p?.processes[role]?.topSelf.filter((x) => x.name.startsWith(name)).reduce((a, b) => a + b.pct, 0) ?? null;
  const errShare = (role: string) => {
    const a = share(role, 'RequestError');
    const b = share(role, 'TimeoutError');
    return a === null || b === null ? '–' : `${fmt(a + b, 0)}%`;
  };
  return `From the round before, in order of what they would buy (where one is done or tried since, it says so):

1. **libs/runtime: a static import in \`requestJson\`, and \`noAsyncTraces: true\` in \`connectNats\`.**
   \`requestJson\` does \`await import('@nats-io/nats-core')\` on every call to get \`headers()\`; under tsx (how
   the CLI runs the services) every such import goes through the loader hooks on another thread — roughly
   0.4 ms of the gateway's CPU per send in the profile, on the critical path of the delivery and of the
   guard's admit. And nats.js builds a \`RequestError\` and a \`TimeoutError\` with a stack trace for every
   request so that a failure shows the caller's stack (in the profile: ${errShare('gateway')} of the gateway's busy time,
   ${errShare('bridge')} of the bridge's, ${errShare('guard')} of the guard's — every KV read is a request); the connection
   option \`noAsyncTraces: true\` turns that off, at the price of that stack on a NATS timeout. Tried
   together in a copy of the repository (ours alone, 5 alternating runs each, same load): blocking p50
   10.7–11.9 ms → 7.3–8.8 ms, about a quarter off; tasks/s up by a similar share. Each alone moved less.
2. **The gateway's session look-up from memory** — done this round (see above).
3. **The guard's compare-and-set from the window it wrote last** — done this session (see above).
   Six messages are left per blocking send: the admit and its reply, the guard's window write, the
   delivery, the bridge's two writes. A guard that forwarded the delivery itself would save none: it
   would still have to answer the gateway, which otherwise cannot tell a slow bridge (whose task it
   queues in the ledger itself) from a guard that never admitted (which must fail closed). Since the
   gateway admits in its own process (recommendation 11) four are left: the window write, the delivery,
   the bridge's two writes.
4. **The resend check** — done this round from the gateway's listing index (see above); a resend the
   index knows is still answered without asking the guard.
5. **Pipelined intake in the bridge** — done in the latest round (a fifth more tasks/s for one session, a
   sixth less CPU per task), after the test failure it had been reverted for was traced to a race in the
   turn loop and mended.
6. **A gateway that does not follow every retained task** — done (see the memory job); left: a session's first
   ListTasks after a start reads it once, and the pass finding the open tasks reads every task once.
7. **The session queue's insert was O(n log n)** (\`TaskQueue.add\` sorted the whole queue and \`has\` scanned
   it) — done in the latest round: binary-search insert and a key set.
8. **The guard window under a raised limit** holds every admitted id for the whole window (14 KB per admit
   after ~2,000 tasks with the default hour): fine at the default 30, not at large limits; a count per
   time bucket would keep it constant.
9. **nats.js builds an Error per request even with \`noAsyncTraces\`** — done 2026-12-02 with a patch (see above): \`RequestOne.resolver\` ended in
   \`cancel()\`, which makes a \`RequestError("cancelled")\` for a promise already settled — one stack trace
   per successful request (every JetStream publish is one): 3% of the bridge's self time and 1–1.4% of the
   gateway's and the guard's at concurrency 16 (a \`--cpu-prof\` of ours this session, nats.js 3.4.0). Worth
   an upstream fix; our own requests could go through one reply subscription as \`quietRequests\` does.
10. **Followers that need the state, not the task.** The gateway's listing index and each bridge's watch
   decode the whole task (history, artifacts) on every change of every task they follow, and a bridge
   starting on a long session reads its whole history once (see the start-up figures). A small second
   value per task (state, context, times) under its own key prefix — or the state in a message header —
   would let them follow that instead. (libs/ledger, with the gateway and bridge owners) The header form, worked out
   2026-12-05 and not built: every ledger write carries the summary the listing index keeps (entry version, state,
   status time, creation time, the context id escaped) in one header, sent with the compare-and-set (\`casPut\`
   takes no headers today); the one-off reads — a session's first listing, the gateway's open-task pass, a
   bridge's start — take a consumer with \`headers_only\` (nats-server 2.6.2 and later) and read whole only the
   entries without the header (written before) and, for a bridge, its open tasks; the live watches stay whole
   (a blocking wait and a stream need the task). It would shorten what the memory job shows growing with the
   ledger (at 100,000 tasks: first listing 2.7 s, open tasks known 2.6 s, a bridge ready 4.7 s) and the listing's
   garbage, not the hot path, whose one write per task the gateway must read whole. Its gain measured before
   building it (2026-12-05, a scratch reader on nats-server 2.9.10: 100,000 entries of 1.1 KB, each with a
   60-byte summary header, read to the end by a consumer as \`readLastValues\` makes it, three reads each
   alternated): whole, each value decoded, 1,157–1,230 ms (the reader's CPU 1.03–1.20 s); \`headers_only\`, the
   header parsed, 853–1,003 ms (0.67–0.80 s). A quarter off a one-off read, because what stays is per message
   (each delivery parsed by nats.js, its ack): not worth a change to every ledger write. Not built.
11. **The guard's hop — done** (see the changes above): the gateway admits in its own process. Measured
   first as an upper bound (\`GATEWAY_GUARD=off\`, no admission: messages per send 6.2 → 3.1, CPU per task
   about −40 %); the in-process admission keeps the one window write per new task and lands at 4.06
   messages and −19 % CPU. What is left of admission's cost is that write (an R1 file-storage KV put) and
   the gateway's share of deciding. The next levers are the bridge's and the gateway's own ledger work
   (recommendation 10) and nats-server's file storage (about a third of ours' CPU per task).
12. **What is left for p50 and the SSE first event (2026-12-03).** \`pnpm bench --hot --admission off\`
   against \`local\`, alternated twice: p50 1.82 / 1.86 → 1.51 / 1.53 ms, SSE first event 1.50 / 1.52 →
   1.23 / 1.23 ms, CPU per task 1.58 / 1.66 → 1.45 / 1.49 ms. So even a gateway that reserved admission
   places in blocks (one compare-and-set for many admits; it needs the issue owner's word, as it loosens
   the guard's exactness) would leave p50 near 3× the reference and the SSE first event near 2.3×. What
   sets them is the delivery hop and the bridge's durable writes, each a wake-up of another process
   (about 0.3 ms here, where the bridge spends 29 % of its CPU in the socket write call — see the
   profile); meeting 1.5× and 2× takes fewer processes in the path (gateway and bridge in one process
   per machine), which the spec's separate services rule out today. Since stop 47 admission does reserve
   places ahead — without loosening the guard: each place is counted from the write that made it and timed
   at its lease's end (the changes above); recommendation 19 measured that one process would not help.
13. **What is left for CPU per task and tasks/s (2026-12-03, later).** With a queued task's start
   written with its result and nats-server on one Go processor, a blocking task under load costs a
   window write (batched per window), the delivery, the bridge's create and one write for start and
   result, each echoed to the gateway's watch — about 1.2 ms of CPU here, of which the gateway is the
   largest share (its HTTP answer's socket write and decoding each watched task lead its profile). The
   next levers, smallest first: the gateway following a small state value instead of whole tasks
   (recommendation 10); the bridge's session watch taking headers only (its own writes come back whole,
   only to be skipped); and for four sessions, whose tasks/s are the machine's CPU, nothing short of
   fewer processes per task (recommendation 12).
14. **After the blocking send's task became one write (2026-12-03, afternoon).** Two aims it moved
   depend on the worker being quick: the bench's echo harness answers at once, so its CPU and tasks/s
   figures measure the path with one bridge write per task; a model takes seconds, and a real
   session's task costs create, start and result as before (per task the difference is then small
   next to the model's time). p50 and the SSE first event remain what recommendation 12 says. The
   nats-server quirk found on the way (a caught-up last-value-per-subject consumer recounts every
   subject on each delivery) is worth knowing for anything else that follows a bucket: the gateway's
   signal watch does (few keys); the one-off scans stop reading once their values are in, and a
   consumer that delivers nothing is not recounted.
15. **NATS permissions and nats-server 2.9's reply tracking (2026-12-03, evening).** Runs since then log
   ours in with the deploy's users, as \`up\` does. For a user allowed to answer requests
   (\`allow_responses\`), nats-server 2.9 remembers the reply-to subject of every message it delivers to
   it — every JetStream delivery has one — until it is answered or the reply window ends, and once it
   holds over 4,096 walks them all on each further message. With NATS's default window (two minutes)
   that took nats-server's CPU per task from 0.27–0.37 to 0.67–0.90 ms at the quick bench's rates
   (\`perf\`: two thirds of its time in \`pruneReplyPerms\`), and a bridge starting on 100,000 tasks took
   35 s instead of 2.7. Done: the deploy allows 5 s (the requests' default timeout), and the ledger's
   watches answer each delivery (an ack their AckNone consumers drop; 0.60 → 0.40 ms of nats-server's
   CPU per task, two more messages per task). The answers cost where the set stays small anyway: with
   four sessions each connection gets a quarter of the deliveries, and four quick runs alternated
   without and with them gave 754 / 562 against 547 / 478 tasks/s (the four-session figures of this
   run fell with them); answering only while a connection receives more than ~2,000 in a window would
   keep both. A successful quiet delivery was left unanswered (the point of it), so a bridge held one
   per task for 5 s and above ~800 tasks a second was walked again: since 2026-12-04 (evening) the
   bridge answers it too (when the delivery asks: \`takenLater\`), with a bare "taken" the gateway passes over, in the same 50 ms batches
   (tasks/s at concurrency 16 +9 %, CPU per task −5 %, nats-server's −15 %; one more message per
   send). A long read (a bridge's start, the gateway's open tasks and first listing of a session) was
   pushed megabytes ahead of its answers by the kv client's ordered consumer, so still walked: since
   2026-12-04 it has a consumer of its own that sends at most 1,000 ahead of their acks (the answers),
   and a read of 100,000 tasks as a session's user takes 2.5–2.7 s, as for a user with no permissions
   (7.5 s before; libs/ledger/src/read-last.ts). A newer nats-server limits how often it walks (the
   compose and k3s deploys run 2.10; not measured here — Debian bookworm ships 2.9.10).
16. **Admit and deliver in one message (for recommendation 12, keeping the separate processes).** A new
   task's path is the window's compare-and-set (gateway → nats-server → gateway), the delivery
   (gateway → nats-server → bridge) and the bridge's write (→ nats-server → gateway): six wake-ups. If
   the window write carried the delivery — the gateway publishing the task under its window key with
   the expected last sequence (the compare-and-set) and each bridge following its session's window keys
   (a consumer filtered to its session's rate windows) — nats-server would store the admission and hand
   the task to the bridge in one step: four wake-ups, as the floor has, the guard's exactness kept
   (nothing reaches a bridge without a successful compare-and-set) and the delivery durable. Open: a
   budget window is keyed by the asking agent, not the session (an agent's task would write the budget
   first); a bridge that is down (today the gateway queues its task in the ledger); the bridges'
   permission to read their sessions' windows; and one more reply-bearing message per task (above).
   Its upper bound re-measured on the current tree (2026-12-04, late; \`--hot --admission off\` against
   \`local\`, three pairs alternated): p50 2.35 1.97 1.65 → 1.30 1.46 1.42 ms, SSE first event 2.16 1.89
   1.54 → 1.29 1.31 1.38 ms, CPU per task 1.44 1.29 1.11 → 0.94 1.08 1.04 ms (nats-server's writes per task
   4.35 → 3.47, messages per send 6.2 → 5.2). Against the reference's 0.71 ms p50 and 1.00 ms first event
   of the full run, that would bring the SSE aim in and CPU per task to its line; p50 would stay near 2×.
   The guard's own design (the window's compare-and-set before the delivery) is what it would change,
   so it is for the issue's owner to take up. Two forms weighed on paper (2026-12-05), neither built:
   the task carried in the window value fails on durability — the window bucket keeps one value per key,
   so the next admit would replace the task of a bridge that is down. Keeping the delivery as it is, the
   gateway could send the window write and the delivery in one socket write and the bridge hold the
   delivery until its consumer of its sessions' windows brings the stored window naming the task (a
   compare-and-set that fails is not stored, so no consumer sees it; a plain subscriber would). That takes
   one of the gateway's wake-ups off the path — the window's answer and the delivery sent after it,
   0.24–0.29 ms in recommendation 17's capture — so p50 would come to about 1.7× the reference, not 1.5×;
   and each task would cost its bridge a JetStream delivery and a window decode more, so CPU per task
   would rise, not fall. Built instead (stop 47): places reserved ahead in the window, which take the
   window's round trip off the path of a steady stream of new tasks with the guard still exact (the
   changes above).
17. **Where a blocking send's time goes at concurrency 1 (2026-12-04).** A loopback capture of single
   sends (tcpdump, one after the other) shows each step: the gateway from the request to its window write
   0.35–0.42 ms, nats-server's store and answer 0.10–0.13, the gateway to its delivery 0.14–0.16, the
   delivery reaching the bridge 0.07, the bridge to its one write 0.37–0.47, that write stored and brought
   to the gateway's watch 0.16–0.23 (the bridge's own copy goes first), the gateway to its answer
   0.23–0.29 ms. None of it waits: it is each process's CPU, one after the other. The floor passes as
   many processes (eight socket writes on its path, each waking the next; the reference has two) in
   0.79 ms; ours spends 0.35–0.47 ms at two of its wake-ups, where a floor responder spends about 0.05,
   and a socket write that wakes another process costs its writer 0.10–0.15 ms here (the bridge's one
   write per task is 13 % of its busy time at concurrency 1). So: fewer writes on the path, or less
   work at each wake-up. Done this round: the watches' answers leave together (one write per 50
   ms instead of two per task, p50 about −15 % in an A/B at concurrency 1) and less per-request work in
   the gateway (table above). Tried and not kept: the bridge not following its own session's changes
   (its own write comes back to it before the gateway's copy goes out) — no change at concurrency 1
   beyond the noise, CPU per task −3 % at 16; nats-server with \`GOGC=400\` — no change. Left: recommendation
   16 takes two writes off the path (the gateway's wait for its window write's answer, and the
   delivery); a stored task of 2.3 KB carried its events with a copy of the task as created, which the
   bridge encoded, nats-server stored and the gateway decoded (done since: the creation event names the
   task only; CPU per task unchanged within the noise).
18. **What four sessions and the rest need (2026-12-04, evening).** Done: a bridge answers its quiet
   deliveries, and the gateway follows a blocking wait's client by its socket (table above). Measured and
   not kept (\`--hot\`, three runs each, alternated): the loop-guard bucket in memory instead of file
   storage — tasks/s, CPU per task and nats-server's CPU within the noise (its write calls per task 4.5
   → 4.1), and a single node's restart would lose every window; the bench's window at 30 ms (about 30
   ids, as a default window at its limit) instead of 100 ms (about 100) — the same figures; ours on
   Node 24 instead of 20 (two runs each) — no change beyond the noise, though one parse of a delivery's
   schema every 2 ms takes 11–14 µs on Node 22 and 24 against 38 µs on Node 20 (V8's Maglev compiles
   code that runs seldom, which is what concurrency 1 runs). Where four sessions lose: at concurrency 16
   over four sessions each bridge spends 0.7–1.35 ms of CPU per task of its own (five \`--hot\` runs), where one busy bridge
   spends 0.45 and one taking a task at a time 0.5–0.9, with the same read and write calls per task;
   six busy processes share the two cores and each wake-up finds its code and data cold (the bridges'
   profiles are flat: the delivery's schema 8 %, the ledger write 13 %, nats.js 12 %). On two cores
   the four-session figures are the CPU per task, and the reference spends half of ours
   (${fmt(v(r, 'cpu_ms_per_task', 'reference'))} ms against ${fmt(v(r, 'cpu_ms_per_task', 'ours'))} here): reaching it, and 1.5× its p50, takes fewer
   wake-ups on the path (recommendation 16; fewer processes would not do it, recommendation 19), not tuning — the spec's flow (the gateway asks
   the session's bridge over NATS, the bridge writes the ledger) keeps two processes and two durable
   writes on it.
19. **Fewer processes would not do it (2026-12-04, night).** Recommendations 12 and 18 left a question:
   would the gateway and its machine's bridges in one process reach the aims? Measured as an upper bound
   with a scratch launcher (not kept) that ran the bridges' compiled code inside the gateway's process,
   each on its own NATS connection, against the usual processes, alternated (\`--hot\`, two runs each):
   one session, p50 1.72 1.56 → 1.50 1.59 ms, tasks/s at concurrency 16 1,233 1,328 → 924 924, CPU per
   task 1.20 1.14 → 1.33 1.34 ms (the one process 0.97–1.00 against 0.85–0.90 for the two, nats-server's
   writes and reads per task 4.5 / 3.3 → 5.9 / 4.4); four sessions, tasks/s 1,226 1,140 → 1,175 962, p50
   1.51 1.72 → 1.60 2.14 ms. One event loop does what two did on two cores, and no hop is saved: every
   message still passes nats-server, whose reads and writes per task rose. What stands between ours and
   the aims is the work and the durable writes at each step of the path (recommendation 17), not how many
   processes take the steps; the spec's separate bridges cost nothing measurable at concurrency 1 and
   gain throughput on two cores, and the ratios stay where recommendations 16–18 put them. In that hour
   four sessions served as many tasks a second as one (each bridge 0.5–0.6 ms of CPU per task of its
   own, against 0.7–1.35 in the runs of recommendation 18): how four sessions fare moves with the
   machine's hour more than with anything measured here.
20. **A larger young generation: measured, not kept (2026-12-04, late).** V8 in Node 20 and 22 lets a
   semi-space grow to 16 MB, Node 24's to 32 MB. Ours' processes with \`--max-semi-space-size=32\` (as Node 24
   has it) against the default, \`--hot\`, three pairs alternated: CPU per task 1.31 1.30 1.26 → 1.20 1.12
   1.23 ms (gateway 0.53–0.54 → 0.46–0.52, bridge 0.40–0.43 → 0.36–0.38), tasks/s at concurrency 16 1,166 1,178
   1,232 → 1,265 1,362 1,268; p50 unchanged within the noise. The memory job with it: idle figures as
   before (gateway 64.6 MB, bridge 59.4 MB), but the gateway once its 100,000-task session is listed held
   181 MB against 139–149 without it, the young generation grown by the index's build and kept. About 7 % of CPU per task
   at a rate no session asks of it, against 40 MB more in the process people keep running beside their
   agents: not kept. On Node 24 it is what ours gets anyway.
21. **The idle bridge on Node 22 and 24 (2026-12-05).** Measured on Node 22.23.3 (RSS after 3–12 s, MB): a
   \`node\` with nothing loaded 41 (35 of it file-backed: the binary's pages); with net, crypto, tls, dns,
   child_process and worker_threads 48; a process that has run Turbofan-optimised code holds 5–6 MB more of
   the binary (a hot loop: 48 → 42 with \`--no-opt\`; Node 24 51 → 45). No service calls \`Intl\` or a locale
   method (checked with hooks on each; touching ICU costs 7 MB). Found later that day (evening), from the list
   of Node's modules a bridge had loaded: the bundle's ESM imports of Node's own modules loaded undici, http2,
   zlib and more into every process on Node 22 and 24 (an ESM import builds the module's ESM face by reading
   every export, and \`node:http\`'s \`WebSocket\` is undici). Done: the bundle asks Node for them instead
   (see the changes above); 3–4 MB off every idle process on Node 22 and 24. The full \`--memory\` run of
   2026-12-05 (evening, 90 s idle) reads the bridge at 58.4 / 68.2 / 66.9 MB RSS on Node 20 / 22 / 24 (the run
   before the change: 59.0 / 72.6 / 70.9), of its own 16.2 / 19.4 / 21.8 (16.5 / 21.6 / 24.7). What is left
   over 60 on Node 22 and 24 is the binary's pages, and 6 MB of them are the optimising compiler's: \`up\`'s
   bridge on Node 22 after 90 s, 68 MB, with \`--no-opt\` 62 (file-backed 48 → 43). V8 optimises a few
   functions while the bundle loads, each run thousands of times then (\`--trace-opt\`, Node 22: Node's
   path functions under the ESM loader's resolution of the bundle's files, and esbuild's \`__name\` helper,
   which \`keepNames\` calls for every function and class), and the compiler's code stays mapped. On Node 24
   nothing is optimised at start-up since the change, and the bridge still holds 67 MB. Next levers, not
   taken: fewer files for a service to load, and names kept without \`__name\` (errors of nats.js are told
   apart by name, so that needs care). Even so the last 7–8 MB would be the binary the newer Nodes bring, which
   every process of the machine shares: an aim on private memory (a bridge's own under 30 MB on every Node,
   say) would judge what a machine pays; restating the aim is the issue owner's call, so the report judges
   RSS as asked.
22. **What is left of the unmet aims, measured again (2026-12-05, stop 48).** *The gateway's flatness on
   Node 20*: a gateway on 100,000 retained tasks (the memory job's steps, Node 20) held 105 MB from 5 s to
   95 s after its open tasks were known; one full collection forced then (a scratch probe with
   \`--expose-gc\`) took it to 75 MB at once (10,000 tasks: 62–63): the young generation had grown to 34 MB
   committed during the start-up pass (16 MB of live heap) and Node 20's V8 shrinks it only at a collection,
   which an idle process does not run. Node 22 and 24 do (1.03× and 1.00× in the 12:32 run). Asking for
   a collection from the product takes \`--expose-gc\` (or setting V8 flags after start, which Node calls
   unpredictable) in every way people start a gateway: not built; Node 20 reached its end of life in April 2026.
   *The idle bridge on Node 22 and 24*: one (Node 22, 40 s idle) uses 12.4 MB of heap, and its heap snapshot
   shows what: 4.5 MB of compiled code and its metadata, about 800 zod
   schemas with their shapes and lazy getters (every schema of the libraries a bridge loads is built when
   its module loads), 1.5 MB of strings. Measured: the bundle without \`keepNames\` takes 1.5 MB (Node 22)
   and 0.8 MB (Node 24) off its RSS, none of it the binary's pages; what schemas built on first use would
   save is not measured. Even with as much again, 64–66 MB would be left against 60, and stack traces would no
   longer name our functions (keepNames): not built; what is left is recommendation 21's. Node's own modules
   (stop 49): an idle bridge has 36 loaded, and a bare Node 22.23.3 that loads the same set holds 51.1 MB, 48.4
   without \`tls\` — which the NATS transport loads when it loads and asks of every server INFO (\`instanceof
   TLSSocket\`) on a plain connection too; the rest come with what a bridge uses (\`child_process\` brings
   \`cluster\` and \`dgram\`; the logger's transport \`worker_threads\`, 0.2 MB). Leaving \`tls\` out would take
   patching the transport, for 2.7 of the 9 MB: done since (stop 50, with fastify's https and http2; the changes
   above). *CPU per task*: four
   \`--hot\` runs of this tree read 0.93–1.03 ms (the 12:32 run's five repetitions 0.92–1.45, median 1.08;
   the 20:08 run's 0.89–1.16, median 1.02): the aim's line sits inside this machine's spread. Profiles at concurrency 16 (\`--profile --phase
   c16\`) spread the rest thinly: the socket writes (the gateway's HTTP answer 12 % of its time, its NATS
   writes 7 %, the bridge's 23 %, each waking nats-server), the collector 5 %, decoding the watched task 3 %,
   admission 5 % (at the bench's 100 ms window a write carries about 150 ids); nothing over a few per cent
   is left that the flow does not need (recommendations 16–18).
23. **Three more levers measured, none built (2026-12-05, night, stop 50).** *Watches on a login that
   answers nothing*: recommendation 15's answers exist because our users may answer requests
   (\`allow_responses\`), so nats-server tracks the reply-to subject of every change a watch brings. A
   process could follow the ledger on a second connection, logged in as a user with no response
   permission (nothing tracked, nothing to answer) and serve its requests on the first. Its upper bound,
   measured with scratch changes (not kept: the permission generator without \`allow_responses\`, replies
   allowed to \`_INBOX.>\` instead, the watches' answers off), \`--hot --sessions 4\`, five pairs
   alternated: messages per send 5.3 → 3.3 every time, but CPU per task 1.36 / 1.71 / 1.44 / 1.59 / 1.64 →
   1.41 / 1.44 / 1.35 / 1.45 / 1.91 ms and tasks/s 1,162 / 919 / 1,076 / 1,037 / 930 → 1,152 / 1,131 /
   1,238 / 1,095 / 835 (ours with no permissions at all, in five more pairs: CPU per task 1.84 / 1.98 / 2.15
   / 1.59 / 1.64 → 1.38 / 1.53 / 1.46 / 1.29 / 1.99) — inside the machine's drift, which moved a
   tree's own runs ±30 % within minutes that hour. Not worth a second user per session in every deploy.
   *No Turbofan at start-up*: an idle bridge on Node 22.23.3 holds 65–66 MB; with \`--max-opt=2\` (V8
   stops at Maglev) or \`--no-opt\`, 59 (the gateway 69 → 64, the scheduler 63 → 58; private memory the same):
   the optimising compiler's pages of the binary, mapped once anything is optimised. At start-up V8
   optimises five functions of a bridge (\`--trace-opt\`): Node's path functions, under the ESM loader's 73
   resolutions of the bundle's files, and esbuild's \`__name\` helper (\`keepNames\`). Turning it back on
   after start-up does not work (\`v8.setFlagsFromString\`: Node 22 keeps it off for good, Node 24 ignores
   it), and on Node 24 nothing is optimised at start-up anyway (its bridge: 64–65 MB with or without).
   Keeping it off for good costs the hot path dearly, measured since (2026-12-06, Node 22.23.3, \`--hot\`,
   three pairs alternated, the bridge alone with \`--max-opt=2\`): the bridge's CPU per task 0.28 / 0.32 /
   0.31 → 0.65 / 0.87 / 0.72 ms, ours' in all 0.94 / 1.04 / 1.06 → 1.59 / 2.25 / 1.73, tasks/s at concurrency
   16 1,562 / 1,417 / 1,361 → 953 / 676 / 895, p50 1.04 / 1.41 / 1.76 → 1.54 / 2.54 / 2.09 ms: six MB of
   a bridge's RSS are not worth that, and the bridge's aim on Node 22 and 24 is left to how it is stated
   (recommendation 21). *The bundle without \`keepNames\`*
   (identifiers not minified, so names stay; 2.6 → 3.6 MB of files): bridge on Node 22 65 → 64–65, on
   Node 24 65 → 63; gateway 70 → 69 and 70 → 68–70: a MB or two at most. What is left of the bridge on Node 24 is
   still recommendation 21's.`;
}

export function reproduce(): string {
  return `\`\`\`sh
pnpm install
pnpm bench --quick      # about 3 minutes on 2 busy cores: 1,000 and 10,000 tasks for the reads and the memory job
pnpm bench              # the full run: more repetitions, longer runs, 1,000 and 100,000 tasks; 10,000 and 100,000 for the memory job
pnpm bench --memory     # the memory job alone, its figures and the aims put into the last latest.json
pnpm bench --node 24    # a full run (or --memory) with the memory job again on these Nodes only (default: 22,24; none: this Node alone)
pnpm bench --profile    # ours alone under the V8 profiler -> bench/results/profile.json (+ raw profiles)
pnpm bench --profile --phase c16   # the same, only blocking sends 16 at once (the tasks/s and CPU aims)
pnpm bench --profile --phase c1    # the same, only blocking sends one at a time (the p50 aim)
pnpm bench --hot        # ours alone, about a minute (--quick: 25 s): messages per send, p50 and CPU per send by process
                        # at c1, tasks/s, CPU and system calls per task by process at c16 -> bench/results/hot.json;
                        # for an A/B of two trees, alternated, never for the aims
pnpm bench --hot --admission service   # the same with a guard process for the gateway to ask (default: local)
pnpm bench --hot --admission off       # the same with no admission at all: what admission costs (never how people run it)
./shrooms test bench    # smoke test (in CI too): --quick writes both files with every figure and every aim judged
\`\`\`

\`pnpm bench\` builds first when a source changed (scripts/build.mjs) and runs the compiled bench and CLI.
Each run starts its own nats-server (\`nats-server\` on the PATH or in /usr/sbin; \`NATS_URL\` is ignored)
and its own processes, and leaves nothing behind. The raw V8 profiles go to \`bench/results/profiles/\`
(not committed); open them in Chrome DevTools or speedscope.`;
}
