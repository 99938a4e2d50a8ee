/**
 * One harness CLI as a child process speaking JSON Lines on stdin/stdout: spawn, write, read, keep
 * the end of stderr for error messages, and stop it step by step (EOF, then signals). Shared by the
 * Claude Code and pi adapters.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '@shrooms/runtime';
import type { Command } from './binaries.js';
import { readJsonl } from './jsonl.js';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface JsonlChildOptions {
  cwd: string;
  env: Record<string, string>;
  log: Logger;
  onValue(value: Record<string, unknown>): void;
  onExit(exit: ChildExit): void;
}

const STDERR_TAIL_CHARS = 4000;

/** How long what the CLI left in its process group has after SIGTERM before SIGKILL, ms. */
const GROUP_GRACE_MS = 2_000;

export class JsonlChild {
  readonly child: ChildProcess;
  readonly exited: Promise<ChildExit>;
  /** Settles once nothing of the CLI's process group is left after it exited (see `endGroup`). */
  private groupEnded: Promise<void> = Promise.resolve();
  private stderr = '';
  private done = false;

  constructor(
    cmd: Command,
    args: string[],
    private readonly opts: JsonlChildOptions,
  ) {
    // Its own process group, so a hard stop also takes the commands it started.
    this.child = spawn(cmd.command, [...cmd.args, ...args], {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const log = opts.log;
    this.exited = new Promise((resolve) => {
      const finish = (exit: ChildExit) => {
        if (this.done) return;
        this.done = true;
        this.groupEnded = this.endGroup();
        resolve(exit);
        opts.onExit(exit);
      };
      this.child.once('exit', (code, signal) => finish({ code, signal }));
      this.child.once('error', (err) => {
        log.error({ err, command: cmd.command }, 'cannot run the harness');
        this.stderr += `\n${err.message}`;
        finish({ code: null, signal: null });
      });
    });
    // A write after the process died must not crash the bridge (EPIPE); the exit tells the story.
    this.child.stdin!.on('error', (err) => log.debug({ err }, 'harness stdin closed'));
    readJsonl(
      this.child.stdout!,
      (v) => {
        if (v && typeof v === 'object' && !Array.isArray(v)) opts.onValue(v as Record<string, unknown>);
      },
      (line) => log.debug({ line: line.slice(0, 500) }, 'harness printed a line that is not JSON'),
    );
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-STDERR_TAIL_CHARS);
      for (const line of d.split('\n')) if (line.trim()) log.debug({ stderr: line.slice(0, 1000) }, 'harness stderr');
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.done;
  }

  /** The end of what the process wrote to stderr (for error messages). */
  stderrTail(chars = 1000): string {
    return this.stderr.slice(-chars).trim();
  }

  write(value: unknown): void {
    if (this.done || !this.child.stdin!.writable) return;
    this.child.stdin!.write(`${JSON.stringify(value)}\n`);
  }

  /** A signal to the process (or, with `group`, to every process it started too). */
  signal(signal: NodeJS.Signals, group = false): void {
    if (this.done || this.child.pid === undefined) return;
    try {
      if (group) process.kill(-this.child.pid, signal);
      else this.child.kill(signal);
    } catch {
      // Already gone.
    }
  }

  /** Waits for the exit up to `ms`; true if it exited. */
  async waitExit(ms: number): Promise<boolean> {
    if (this.done) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const r = await Promise.race([this.exited.then(() => true as const), timeout]);
    clearTimeout(timer);
    return r;
  }

  /**
   * EOF on stdin (both CLIs finish and exit), then SIGTERM, then SIGKILL to the whole group; resolves
   * once what the CLI started is gone too.
   */
  async stop(graceMs = 5_000): Promise<ChildExit> {
    this.child.stdin!.end();
    if (!(await this.waitExit(graceMs))) {
      this.signal('SIGTERM');
      if (!(await this.waitExit(3_000))) this.signal('SIGKILL', true);
    }
    const exit = await this.exited;
    await this.groupEnded;
    return exit;
  }

  /** SIGKILL to the whole group, now. */
  async kill(): Promise<ChildExit> {
    this.signal('SIGKILL', true);
    const exit = await this.exited;
    await this.groupEnded;
    return exit;
  }

  /**
   * Once the CLI has exited, whatever it started in its group and left running (a hung test run, a
   * dev server holding a port — often why it was stopped) gets SIGTERM, then SIGKILL after
   * GROUP_GRACE_MS: the next CLI would find them in its way, and nobody else knows of them.
   */
  private async endGroup(): Promise<void> {
    const group = this.child.pid === undefined ? undefined : -this.child.pid;
    const left = (signal: NodeJS.Signals | 0) => {
      try {
        process.kill(group!, signal);
        return true;
      } catch {
        return false; // none left (ESRCH)
      }
    };
    if (group === undefined || !left('SIGTERM')) return;
    for (let waited = 0; waited < GROUP_GRACE_MS; waited += 50) {
      await new Promise((r) => setTimeout(r, 50).unref());
      if (!left(0)) return;
    }
    left('SIGKILL');
  }
}

/** Whether `p` settles within `ms`. */
export function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void p.then(
      () => (clearTimeout(timer), resolve(true)),
      () => (clearTimeout(timer), resolve(true)),
    );
  });
}
