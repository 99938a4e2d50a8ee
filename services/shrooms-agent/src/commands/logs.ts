/**
 * `shrooms-agent logs [NAME]`: where the logs of this machine's parts are, and one of them followed.
 * Looks in `up`'s state folder (`logs/PART.log`, `logs/bridge-SESSION.log`) and in the state
 * folder of each bridge started by hand (`$XDG_STATE_HOME/shrooms/bridges/MACHINE-SESSION/bridge.log`).
 */
import { closeSync, existsSync, openSync, readSync, readdirSync, statSync, unwatchFile, watchFile } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { formatLogLine, humanDuration } from '@shrooms/runtime';
import { cliEnv, shellEnv } from '../config.js';
import { stateDirOf } from './local-mesh.js';
import type { Command } from './types.js';
import { commandArgs, usageLine } from './usage.js';

const HELP = `usage: shrooms-agent logs [PART|SESSION] [-n LINES] [--no-follow] [--json]

Without a name: every log this machine has, the one written last first, when and where it is.
With one: its last LINES lines (default 20), then what is written to it until Ctrl-C
(--no-follow: stop there). Lines are shown as "time LEVEL [part] message (its fields)"; --json
prints them as written.

Where the logs are:
  up's state folder (SHROOMS_STATE_DIR, else .state/ in the repository): logs/up.log (up's start
  and stop, its parts' exits and restarts), logs/gateway.log, logs/guard.log, logs/scheduler.log,
  logs/bridge-SESSION.log
  a bridge started by hand: BRIDGE_STATE_DIR, else $XDG_STATE_HOME/shrooms/bridges/MACHINE-SESSION/
  (XDG_STATE_HOME defaults to ~/.local/state), file bridge.log (BRIDGE_LOG_FILE moves it)

Exit codes: 0 shown (and followed until Ctrl-C), 1 no such log or a usage error.
`;

interface Found {
  name: string;
  file: string;
}

/** Every log file known here, named as `logs NAME` takes them. */
function knownLogs(): Found[] {
  const out: Found[] = [];
  const state = stateDirOf(shellEnv());
  const upLogs = state && join(state, 'logs');
  if (upLogs && existsSync(upLogs))
    for (const f of readdirSync(upLogs).filter((f) => f.endsWith('.log'))) out.push({ name: basename(f, '.log'), file: join(upLogs, f) });
  const bridges = join(cliEnv().XDG_STATE_HOME ?? join(homedir(), '.local', 'state'), 'shrooms', 'bridges');
  if (existsSync(bridges))
    for (const d of readdirSync(bridges)) {
      const file = join(bridges, d, 'bridge.log');
      if (existsSync(file)) out.push({ name: `bridge ${d}`, file });
    }
  return out;
}

/** The log a name means: a part of `up`, a session of `up`, or a bridge's (by SESSION or MACHINE-SESSION). */
function pick(name: string, logs: Found[]): Found | undefined {
  const bare = name.replace('/', '-');
  const hits = logs.filter(
    (l) => l.name === name || l.name === `bridge-${name}` || l.name === `bridge ${bare}` || l.name.endsWith(`-${name}`),
  );
  // The one written last, when a session ran both under up and by hand.
  return hits.sort((a, b) => statSync(b.file).mtimeMs - statSync(a.file).mtimeMs)[0];
}

function readFrom(file: string, start: number): { text: string; end: number } {
  const size = statSync(file).size;
  const from = size < start ? 0 : start; // truncated or replaced: from its start
  const buf = Buffer.alloc(size - from);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, from);
  } finally {
    closeSync(fd);
  }
  return { text: buf.toString('utf8'), end: size };
}

export const logsCommand: Pick<Command, 'run'> = {
  async run(args) {
    const parsed = commandArgs('logs', {
      args,
      allowPositionals: true,
      options: {
        n: { type: 'string', short: 'n' },
        'no-follow': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (!parsed) return 1;
    const { values, positionals } = parsed;
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const lines = values.n === undefined ? 20 : Number(values.n);
    if (!Number.isInteger(lines) || lines < 0 || positionals.length > 1) {
      process.stderr.write(usageLine('logs', positionals.length > 1 ? 'one name at a time' : '-n takes a number of lines'));
      return 1;
    }
    const logs = knownLogs();
    if (!positionals[0]) {
      if (!logs.length) process.stdout.write('no logs here yet (start `shrooms-agent up` or a bridge)\n');
      // The one written last first, with how long ago: a bridge's log of a session long gone sinks.
      const now = Date.now();
      const written = logs.map((l) => ({ ...l, at: statSync(l.file).mtimeMs })).sort((a, b) => b.at - a.at);
      for (const l of written)
        process.stdout.write(`${l.name.padEnd(28)} ${`${humanDuration(Math.max(0, now - l.at))} ago`.padEnd(12)} ${l.file}\n`);
      return 0;
    }
    const log = pick(positionals[0], logs);
    if (!log) {
      process.stderr.write(
        `shrooms-agent logs: no log of ${JSON.stringify(positionals[0])} here${logs.length ? `; there are: ${logs.map((l) => l.name).join(', ')}` : ''}\n`,
      );
      return 1;
    }
    process.stderr.write(`${log.file}\n`);
    const show = (text: string) => {
      for (const line of text.split('\n')) if (line) process.stdout.write(`${values.json ? line : formatLogLine(line)}\n`);
    };
    let { text, end } = readFrom(log.file, 0);
    const all = text.split('\n').filter(Boolean);
    show(all.slice(Math.max(0, all.length - lines)).join('\n'));
    if (values['no-follow']) return 0;
    let partial = '';
    watchFile(log.file, { interval: 250 }, () => {
      ({ text, end } = readFrom(log.file, end));
      const chunk = partial + text;
      const cut = chunk.lastIndexOf('\n');
      partial = chunk.slice(cut + 1);
      show(chunk.slice(0, cut + 1));
    });
    await new Promise<void>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
    unwatchFile(log.file);
    return 0;
  },
};
