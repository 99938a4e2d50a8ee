/** Runs a command to completion: its stdout, or an error carrying the tail of its output. */
import { spawn } from 'node:child_process';

export interface RunOptions {
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Kills the command (SIGKILL) past this. Default 10 minutes. */
  timeoutMs?: number;
  /** Output goes to this callback as it comes (long builds), as well as into the result. */
  onOutput?: (chunk: string) => void;
}

export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 600_000;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ? { ...process.env, ...opts.env } : process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let tail = '';
    const keep = (d: Buffer, toStdout: boolean) => {
      const s = d.toString();
      if (toStdout) stdout += s;
      tail = (tail + s).slice(-6000);
      opts.onOutput?.(s);
    };
    child.stdout.on('data', (d: Buffer) => keep(d, true));
    child.stderr.on('data', (d: Buffer) => keep(d, false));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${cmd}: ${e.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}:\n${tail}`));
    });
    child.stdin.end(opts.input);
  });
}
