/**
 * A log line as a person reads it: `12:31:56.677 INFO  [bridge web] bridge ready for vm/web`.
 * Reads pino's lines (level a number, time in ms) and up.log's (level a word, time ISO 8601); any
 * other line comes back as it is. A log on a terminal is written so, and `shrooms-agent logs`
 * shows files so.
 */
export function formatLogLine(line: string): string {
  if (!line.startsWith('{')) return line;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof v.level === 'string' ? v.level.toUpperCase() : (LEVELS[Number(v.level ?? 30)] ?? '');
  const time = typeof v.time === 'number' || typeof v.time === 'string' ? new Date(v.time).toISOString().slice(11, 23) : '';
  const err = (v.err as { message?: string } | undefined)?.message;
  return `${time} ${level.padEnd(5)} [${String(v.service ?? '?')}] ${String(v.msg ?? '')}${err ? `: ${err}` : ''}${details(v)}`;
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, or that the line's head shows already. */
const HEAD = new Set(['level', 'time', 'pid', 'hostname', 'name', 'service', 'msg', 'err', 'trace_id', 'span_id']);
const MAX_VALUE = 120;

/**
 * The line's own fields with a plain value, ` (taskId=demo:m-1, nudge=2)`; objects (a config) left to
 * --json, and so is a value the message says already as a word of its own ("bridge ready for vm/web"
 * needs no `session=vm/web`, "gateway is back (pid 41, restart 1)" no `part=gateway, pid=41`).
 */
function details(v: Record<string, unknown>): string {
  const msg = String(v.msg ?? '');
  const shown: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    if (HEAD.has(k) || x === null || typeof x === 'object') continue;
    const text = String(x);
    if (says(msg, text)) continue;
    shown.push(`${k}=${text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text}`);
  }
  return shown.length ? ` (${shown.join(', ')})` : '';
}

/** Whether `text` stands in `msg` as a word of its own: not inside a longer word, path, id or number. */
function says(msg: string, text: string): boolean {
  if (!text) return false;
  for (let at = msg.indexOf(text); at >= 0; at = msg.indexOf(text, at + 1)) {
    const end = at + text.length;
    // A sentence's full stop or colon ends a word; inside a token ("web:m-1", "2.5") it does not.
    const joinedBefore = at > 0 && (WORD.test(msg[at - 1]!) || (/[.:]/.test(msg[at - 1]!) && WORD.test(msg[at - 2] ?? ' ')));
    const joinedAfter = end < msg.length && (WORD.test(msg[end]!) || (/[.:]/.test(msg[end]!) && WORD.test(msg[end + 1] ?? ' ')));
    if (!joinedBefore && !joinedAfter) return true;
  }
  return false;
}

const WORD = /[\w/@-]/;
