/**
 * The live line a person sees while `--wait` waits on a terminal (stderr, redrawn in place):
 * `⠹ laptop/demo:cli-… queued — 12 s`. Nothing at all when stderr is not a terminal.
 */
import { summarize } from '@shrooms/client';
import type { Task } from '@shrooms/protocol';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface ProgressLine {
  update(task: Task): void;
  stop(): void;
}

export function progressLine(machine: string, stream: NodeJS.WriteStream = process.stderr): ProgressLine {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const started = Date.now();
  let frame = 0;
  let label = 'waiting';
  const draw = () => {
    const s = Math.floor((Date.now() - started) / 1000);
    stream.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label} — ${s} s`);
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return {
    update(task) {
      const s = summarize(task, machine);
      label = `${s.task} ${s.status}`;
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write('\r\x1b[2K');
    },
  };
}
