/**
 * The live line a person sees while `--wait` waits on a terminal (stderr, redrawn in place):
 * `⠹ laptop/demo:cli-… queued — 12 s`. When stderr is not a terminal (a script, a log, an agent's
 * shell), one plain line each time what it shows changes — so a wait is never silent: held for the
 * owner, queued, working, what the bridge says meanwhile (the model endpoint failing, a turn that
 * ended without task_update).
 *
 * Ctrl-C while it waits stops the wait, not the task: said on the line's stream with how to follow
 * the task again or cancel it, and the command exits 130, as a shell expects of an interrupted one.
 */
import { summarize } from '@shrooms/client';
import type { Task } from '@shrooms/protocol';
import { waitLabel } from './show.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface ProgressLine {
  update(task: Task): void;
  stop(): void;
}

export function progressLine(machine: string, task: string, stream: NodeJS.WriteStream = process.stderr): ProgressLine {
  const line = drawn(machine, stream);
  const interrupted = () => {
    line.stop();
    stream.write(
      `stopped waiting; ${task} goes on: follow it with shrooms-agent a2a get ${task} --wait, or cancel it with shrooms-agent a2a cancel ${task}\n`,
    );
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  return {
    update: (t) => line.update(t),
    stop() {
      process.off('SIGINT', interrupted);
      line.stop();
    },
  };
}

function drawn(machine: string, stream: NodeJS.WriteStream): ProgressLine {
  if (!stream.isTTY) {
    let shown = '';
    return {
      update(task) {
        const label = waitLabel(summarize(task, machine));
        if (label !== shown) stream.write(`${label}\n`);
        shown = label;
      },
      stop() {},
    };
  }
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
      label = waitLabel(summarize(task, machine));
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write('\r\x1b[2K');
    },
  };
}
