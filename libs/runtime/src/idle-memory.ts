/**
 * Lets V8 give memory back when a process goes quiet, on Node 24 as on Node 20 and 22.
 *
 * V8's memory reducer runs a memory-reducing collection (young generation shrunk, pooled pages
 * released) once the allocation rate is low, checking every 8 s. Since V8 13.1 (Node 24) the rate
 * of allocations on the embedder's C++ heap (cppgc) has no floor, and a process that has never
 * allocated there reports exactly 0, which the check reads as the highest rate: "high alloc" at
 * every tick, and the collection comes only from the reducer's watchdog 100 s after the last full
 * collection, or never when anything else collects first. Measured on our processes (Node 24.21,
 * `--trace-gc`): an idle bridge kept the 16 MB young generation start-up grew and sat at 78 MB
 * RSS (58 MB on Node 20); the gateway on a listed 100,000-task session at 273 MB (149).
 *
 * Node allocates on cppgc for a `vm.Script`, so compiling a trivial one now and then gives the
 * reducer a tiny non-zero rate — "low alloc" — and it works as on Node 22. The rate decays to
 * exactly 0 after about 110 s, hence a compile every 30 s (a few microseconds, on an unref'd timer
 * that keeps no process alive). Nothing to do before V8 13.
 */
import { Script } from 'node:vm';

/** Under the ~110 s after which one compile's trace has decayed to exactly 0 again. */
const MEMORY_REDUCER_NUDGE_MS = 30_000;

let nudging: NodeJS.Timeout | undefined;

/** Whether this V8 has the reducer's zero-rate blind spot (13.1 and later). */
export function needsMemoryReducerNudge(v8Version = process.versions.v8): boolean {
  const [major = 0, minor = 0] = v8Version.split('.').map(Number);
  return major > 13 || (major === 13 && minor >= 1);
}

/** Starts the nudges for the rest of the process's life (once; later calls do nothing). */
export function releaseMemoryWhenIdle(): void {
  if (nudging || !needsMemoryReducerNudge()) return;
  const nudge = () => void new Script('0');
  nudge();
  nudging = setInterval(nudge, MEMORY_REDUCER_NUDGE_MS).unref();
}
