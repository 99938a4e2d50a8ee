/**
 * The bench's own helper processes (load generator, reference server, floor responders): each a
 * node child with an IPC channel, run the way this process runs (the compiled bench/dist when
 * `pnpm bench` started it; the sources under tsx in development). The parent sends `{ id, ...command }` and gets back
 * `{ id, ok, result | error }`; a child says `{ ready: ... }` once it can take commands.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the running bench: bench/dist (compiled) or bench/src (under tsx). */
export const BENCH_SRC = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(BENCH_SRC, '..', '..');
/** Whether this bench runs compiled: then every process it starts runs compiled code too. */
export const BUILT = import.meta.url.endsWith('.js');

/** How node runs the bench's own `script` (named by its source, `arms/x.ts`). */
export function benchScript(script: string): string[] {
  return BUILT
    ? [join(BENCH_SRC, script.replace(/\.ts$/, '.js'))]
    : ['--conditions=development', '--import', 'tsx', join(BENCH_SRC, script)];
}

export interface Child<Ready = unknown> {
  name: string;
  proc: ChildProcess;
  pid: number;
  ready: Ready;
  call<T = unknown>(command: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  output(): string;
  stop(): Promise<void>;
}

type Reply = { id: number; ok: boolean; result?: unknown; error?: string };

/** Starts `bench/src/<script>` with IPC and waits for its `{ ready }` message. */
export async function startChild<Ready>(
  name: string,
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<Child<Ready>> {
  const proc = spawn(process.execPath, [...nodeArgs, ...benchScript(script), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 1;
  let readyResolve!: (r: Ready) => void;
  let readyReject!: (e: Error) => void;
  const readyP = new Promise<Ready>((res, rej) => ((readyResolve = res), (readyReject = rej)));
  proc.on('message', (m: Reply | { ready: Ready }) => {
    if ('ready' in m) return readyResolve(m.ready);
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(`${name}: ${m.error}`));
  });
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', (code, signal) => {
      const err = new Error(`${name} exited (${code ?? signal}):\n${out.slice(-3000)}`);
      readyReject(err);
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.reject(err);
      }
      pending.clear();
      resolve();
    }),
  );
  const timer = setTimeout(() => readyReject(new Error(`${name} not ready within 120 s:\n${out.slice(-3000)}`)), 120_000);
  const ready = await readyP.finally(() => clearTimeout(timer));
  return {
    name,
    proc,
    pid: proc.pid!,
    ready,
    output: () => out,
    call<T>(command: Record<string, unknown>, timeoutMs = 600_000): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const t = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${name}: no answer to ${String(command.type)} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer: t });
        proc.send({ id, ...command });
      });
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** The child side: answers commands with `handle`, then says it is ready. */
export function serve(handle: (command: { type: string } & Record<string, unknown>) => Promise<unknown>, ready: unknown): void {
  if (!process.send) throw new Error('run me through startChild (no IPC channel)');
  process.on('message', (m: { id: number; type: string } & Record<string, unknown>) => {
    void handle(m).then(
      (result) => process.send!({ id: m.id, ok: true, result }),
      (err: unknown) => process.send!({ id: m.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ ready });
}
