/**
 * The live line a person sees while `--wait` waits on a terminal (stderr, redrawn in place):
 * `⠹ laptop/demo:cli-… queued — 12 s`. When stderr is not a terminal (a script, a log, an agent's
 * shell), one plain line each time what it shows changes — so a wait is never silent: held for the
 * owner, queued and behind what (the task its worker is on, a turn of its own, no bridge running),
 * working, what the bridge says meanwhile (the model endpoint failing, a turn that ended without
 * task_update).
 *
 * Ctrl-C while it waits stops the wait, not the task: said on the line's stream with how to follow
 * the task again or cancel it, and the command exits 130, as a shell expects of an interrupted one.
 */
import { summarize, type TaskSummary, watchQueued } from '@shrooms/client';
import type { Task } from '@shrooms/protocol';
import { waitLabel } from './show.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** How often a queued task's line reads again what it waits for (one listing of the signal field). */
const QUEUED_REFRESH_MS = 10_000;

export interface ProgressLine {
  update(task: Task): void;
  stop(): void;
}

export interface ProgressOptions {
  /** What a queued task waits for (`ShroomsClient.explain`); never rejects. */
  explain?: (s: TaskSummary) => Promise<TaskSummary>;
  stream?: NodeJS.WriteStream;
}

export function progressLine(machine: string, task: string, opts: ProgressOptions = {}): ProgressLine {
  const stream = opts.stream ?? process.stderr;
  const line = drawn(stream);
  // A queued task shows what it waits for once read (and read again now and then), not bare "queued".
  const queued = opts.explain ? watchQueued(opts.explain, QUEUED_REFRESH_MS, (e) => line.show(waitLabel(e))) : undefined;
  const interrupted = () => {
    stop();
    stream.write(
      `stopped waiting; ${task} goes on: follow it with shrooms-agent a2a get ${task} --wait, or cancel it with shrooms-agent a2a cancel ${task}\n`,
    );
    process.exit(130);
  };
  const stop = () => {
    process.off('SIGINT', interrupted);
    queued?.stop();
    line.stop();
  };
  process.once('SIGINT', interrupted);
  return {
    update(t) {
      const s = summarize(t, machine);
      queued?.update(s);
      if (s.status !== 'queued' || !queued) line.show(waitLabel(s));
    },
    stop,
  };
}

interface Drawn {
  show(label: string): void;
  stop(): void;
}

function drawn(stream: NodeJS.WriteStream): Drawn {
  if (!stream.isTTY) {
    let shown = '';
    return {
      show(label) {
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
    show(next) {
      label = next;
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write('\r\x1b[2K');
    },
  };
}
