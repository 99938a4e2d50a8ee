/**
 * Runs our services as real child processes for cross-process tests: `node --import tsx` on a
 * service's main (or, `built`, node on its compiled JavaScript, as people run it), with its
 * environment, output captured, and a helper to wait for a line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  kill(): Promise<void>;
}

/** The CLI as people run it: its compiled main bundled (scripts/bundle.mjs). */
const CLI_MAIN = 'services/shrooms-agent/src/main.ts';
const CLI_BUNDLE = 'services/shrooms-agent/bundle/main.js';

/**
 * How a compiled program runs: `true` as people run it (the CLI bundled), `'unbundled'` from each
 * package's dist/ (a CPU profile then names the package of each function).
 */
export type Built = boolean | 'unbundled';

/**
 * The compiled file of a package's source (`X/src/a/b.ts` → `X/dist/a/b.js`; scripts/build.mjs
 * builds it); for the CLI's main, its bundle unless `unbundled`.
 */
export function builtFile(script: string, built: Built = true): string {
  if (script === CLI_MAIN && built !== 'unbundled') return CLI_BUNDLE;
  const m = /^(.*)\/src\/(.+)\.ts$/.exec(script);
  if (!m) throw new Error(`${script} is not a package source (…/src/….ts)`);
  return `${m[1]}/dist/${m[2]}.js`;
}

/** How node runs `script` (relative to the repository): its sources under tsx, or `built`. */
export function nodeArgs(script: string, built: Built = false): string[] {
  return built ? [join(REPO_ROOT, builtFile(script, built))] : ['--conditions=development', '--import', 'tsx', join(REPO_ROOT, script)];
}

/**
 * `node --conditions=development --import tsx <script> ...args` from the repository root, or with
 * `built` its compiled JavaScript (`node X/dist/….js`).
 */
export function runTs(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  opts: { cwd?: string; built?: Built } = {},
): ServiceProcess {
  const child = spawn(process.execPath, [...nodeArgs(script, opts.built), ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return wrap(child);
}

export function wrap(child: ChildProcess): ServiceProcess {
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    waitFor(re, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            cleanup();
            resolve(m[0]);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re} in output:\n${out.slice(-3000)}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`process exited while waiting for ${re}:\n${out.slice(-3000)}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', onExit);
        };
        listeners.add(check);
        child.once('exit', onExit);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Polls `check` until it returns a truthy value (no wall-clock assertions: only a bound). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 20_000,
  stepMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    // A check that never settles (a read with no bound of its own) must not outlive the deadline:
    // it is raced against the time left, and a hang is named as one.
    const started = Date.now();
    const outcome = await settledBy(check, deadline - started);
    if (outcome === HUNG) {
      throw new Error(`condition not met within ${timeoutMs} ms: the check had not returned after ${Date.now() - started} ms`);
    }
    if ('error' in outcome) last = outcome.error;
    else if (outcome.value) return outcome.value as T;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
}

const HUNG = Symbol('hung');

async function settledBy<T>(check: () => Promise<T> | T, ms: number): Promise<{ value: T } | { error: unknown } | typeof HUNG> {
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<typeof HUNG>((r) => {
    timer = setTimeout(() => r(HUNG), Math.max(0, ms));
  });
  const settled = Promise.resolve()
    .then(check)
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  try {
    return await Promise.race([settled, outOfTime]);
  } finally {
    clearTimeout(timer);
  }
}
