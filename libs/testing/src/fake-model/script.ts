/**
 * The fake model's directive language and the reading of a conversation, shared by both wire
 * formats. Pure functions: no I/O, so the unit tests pin them exactly.
 *
 * A conversation is reduced to its last real user prompt (Claude Code's `<system-reminder>` blocks,
 * `[Request interrupted …]` markers and trailing `role:"system"` messages skipped) and the tool
 * results that came back after it. The prompt is a script:
 *
 *   script := step ( "THEN" step )*           (the first step starts at the first USE_TOOL: or SAY:)
 *   step   := ["SLOW"] ( "USE_TOOL:" name [json-object] | "SAY:" text-to-end-of-line | "FAIL"[":"status] )
 *
 * Round r of the turn (r = tool results seen since the prompt) plays step r. Past the last step the
 * model quotes the last tool result (`FAKE_REPLY(n): tool returned: …`) and ends the turn. Outside
 * the script, `FAIL` anywhere makes the first request of the turn an HTTP error, `SLOW` anywhere
 * streams every reply of the turn slowly, and a prompt without a script gets `FAKE_REPLY(n): <prompt>`.
 *
 * Placeholders inside tool arguments and SAY text: `$TASK` (the task id from the
 * `[shrooms task ID from …]` header of the prompt, or of an earlier prompt), `$RESULT` (the last
 * tool result). `$$TASK` is a literal `$TASK` for the next model in a chain: each model strips one
 * `$`, so `nest()` a script before putting it inside another one.
 */

export type Step =
  | { kind: 'tool'; name: string; input: Record<string, unknown>; slow: boolean }
  | { kind: 'say'; text: string; slow: boolean }
  | { kind: 'fail'; status: number };

export interface Script {
  steps: Step[];
  /** `SLOW` outside the script: every reply of the turn streams slowly. */
  slow: boolean;
  /** `FAIL` outside the script: the first request of the turn fails. */
  fail: boolean;
  /** JSON arguments that did not parse (the step then gets `{}`). */
  errors: string[];
}

/** What the server answers to one request. */
export type Reply =
  | { kind: 'text'; text: string; slow?: boolean }
  | { kind: 'tool'; name: string; input: Record<string, unknown>; slow?: boolean }
  | { kind: 'fail'; status?: number; message?: string };

/** One message of a conversation, normalised across Anthropic Messages and OpenAI Chat. */
export type Entry =
  { kind: 'prompt'; text: string } | { kind: 'toolResult'; text: string } | { kind: 'assistant'; toolCalls: number; text: string };

export interface Conversation {
  /** The last real user prompt ('' if none). */
  prompt: string;
  /** Tool-result rounds since that prompt. */
  round: number;
  /** Text of the last tool result since the prompt. */
  lastResult?: string;
  /** Task id from the newest `[shrooms task …]` header (this prompt first, then earlier ones). */
  taskId?: string;
}

const HEADER_RE = /\[shrooms task (.+?)\s+(?:[—–-]+\s*more\s+)?from\s/;

export function taskIdOf(text: string): string | undefined {
  return HEADER_RE.exec(text)?.[1];
}

export function summarize(entries: Entry[]): Conversation {
  let p = -1;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]!.kind === 'prompt') {
      p = i;
      break;
    }
  }
  const prompt = p >= 0 ? (entries[p] as { text: string }).text : '';
  let round = 0;
  let lastResult: string | undefined;
  let inResults = false;
  for (const e of entries.slice(p + 1)) {
    if (e.kind === 'toolResult') {
      // Parallel tool results arrive as several entries in a row: one round.
      if (!inResults) round++;
      lastResult = inResults && lastResult !== undefined ? `${lastResult}\n${e.text}` : e.text;
      inResults = true;
    } else inResults = false;
  }
  let taskId: string | undefined;
  for (let i = p; i >= 0 && !taskId; i--) {
    const e = entries[i]!;
    if (e.kind === 'prompt') taskId = taskIdOf(e.text);
  }
  return { prompt, round, lastResult, taskId };
}

const STEP_START = /USE_TOOL:|SAY:/;

export function parseScript(prompt: string): Script {
  const errors: string[] = [];
  const steps: Step[] = [];
  const m = STEP_START.exec(prompt);
  let start = m ? m.index : prompt.length;
  // A SLOW right before the first step belongs to it.
  const slowBefore = /SLOW\s+$/.exec(prompt.slice(0, start));
  if (m && slowBefore) start = slowBefore.index;
  let pos = start;
  let end = start;
  while (m) {
    pos = skipWs(prompt, pos);
    let slow = false;
    if (prompt.startsWith('SLOW', pos) && /\s/.test(prompt[pos + 4] ?? '')) {
      slow = true;
      pos = skipWs(prompt, pos + 4);
    }
    const step = parseStep(prompt, pos, slow, errors);
    if (!step) break;
    steps.push(step.step);
    pos = step.end;
    end = pos;
    const next = /^\s*THEN\b\s*/.exec(prompt.slice(pos));
    if (!next) break;
    pos += next[0].length;
  }
  const outer = prompt.slice(0, start) + ' ' + prompt.slice(end);
  return { steps, slow: /\bSLOW\b/.test(outer), fail: /\bFAIL\b/.test(outer), errors };
}

function parseStep(s: string, pos: number, slow: boolean, errors: string[]): { step: Step; end: number } | undefined {
  if (s.startsWith('USE_TOOL:', pos)) {
    const nameMatch = /^[^\s{]+/.exec(s.slice(pos + 9));
    if (!nameMatch) return undefined;
    let end = pos + 9 + nameMatch[0].length;
    let input: Record<string, unknown> = {};
    const j = skipWs(s, end);
    if (s[j] === '{') {
      const close = jsonObjectEnd(s, j);
      const raw = s.slice(j, close);
      try {
        const v = JSON.parse(raw) as unknown;
        if (v && typeof v === 'object' && !Array.isArray(v)) input = v as Record<string, unknown>;
      } catch (e) {
        errors.push(`USE_TOOL:${nameMatch[0]}: ${(e as Error).message}`);
      }
      end = close;
    }
    return { step: { kind: 'tool', name: nameMatch[0], input, slow }, end };
  }
  if (s.startsWith('SAY:', pos)) {
    const rest = s.slice(pos + 4);
    const stop = /\s+THEN\s+(?=SLOW\s|USE_TOOL:|SAY:|FAIL\b)|\n/.exec(rest);
    const text = (stop ? rest.slice(0, stop.index) : rest).trim();
    return { step: { kind: 'say', text, slow }, end: pos + 4 + (stop ? stop.index : rest.length) };
  }
  const fail = /^FAIL(?::(\d{3}))?\b/.exec(s.slice(pos));
  if (fail) return { step: { kind: 'fail', status: fail[1] ? Number(fail[1]) : 500 }, end: pos + fail[0].length };
  return undefined;
}

function skipWs(s: string, pos: number): number {
  while (pos < s.length && /\s/.test(s[pos]!)) pos++;
  return pos;
}

/** Index just past the `}` that closes the object opening at `pos` (string-aware); end of text if unclosed. */
function jsonObjectEnd(s: string, pos: number): number {
  let depth = 0;
  let inString = false;
  for (let i = pos; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return s.length;
}

const PLACEHOLDER = /(\$+)(TASK|RESULT)\b/g;

/** Replaces `$TASK`/`$RESULT`; `$$X` becomes `$X` (meant for the next model). Unknown values stay. */
export function substitute(text: string, vars: { TASK?: string; RESULT?: string }): string {
  return text.replace(PLACEHOLDER, (whole, dollars: string, name: 'TASK' | 'RESULT') => {
    if (dollars.length > 1) return dollars.slice(1) + name;
    return vars[name] ?? whole;
  });
}

export function substituteDeep<T>(value: T, vars: { TASK?: string; RESULT?: string }): T {
  if (typeof value === 'string') return substitute(value, vars) as T;
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, vars)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteDeep(v, vars)])) as T;
  }
  return value;
}

/** Protects a script's placeholders for one more hop: what this model passes on, the next one fills. */
export function nest(script: string): string {
  return script.replace(PLACEHOLDER, (_w, dollars: string, name: string) => `$${dollars}${name}`);
}

/** Builders, so tests never hand-escape JSON: `chain(useTool('task_update', {...}), say('ok'))`. */
export function useTool(name: string, input: Record<string, unknown> = {}): string {
  return `USE_TOOL:${name} ${JSON.stringify(input)}`;
}
export function say(text: string): string {
  return `SAY:${text.replace(/\n/g, ' ')}`;
}
// Named `chain`, not `then`: a module exporting `then` is a thenable, and `await import()` of it hangs.
export function chain(...steps: string[]): string {
  return steps.join(' THEN ');
}

/**
 * Picks a tool offered in the request: the exact name, else one ending in `__<name>` (Claude Code's
 * and our pi extension's `mcp__server__tool`), else one ending in `_<name>` (Gemini CLI's
 * `mcp_server_tool`, OpenCode's `server_tool`).
 */
export function resolveToolName(name: string, offered: string[]): string {
  if (offered.includes(name)) return name;
  return offered.find((t) => t.endsWith(`__${name}`)) ?? offered.find((t) => t.endsWith(`_${name}`)) ?? name;
}

export interface PlanInput {
  entries: Entry[];
  offeredTools: string[];
  /** Sequence number of the request, for `FAKE_REPLY(n)`. */
  n: number;
}

/** The default behaviour: what the directive language asks for at this point of the conversation. */
export function plan({ entries, offeredTools, n }: PlanInput): { reply: Reply; conversation: Conversation; script: Script } {
  const conversation = summarize(entries);
  const script = parseScript(conversation.prompt);
  const vars = { TASK: conversation.taskId, RESULT: conversation.lastResult };
  const { round } = conversation;
  const reply = ((): Reply => {
    if (round === 0 && script.fail) return { kind: 'fail', status: 500 };
    const step = script.steps[round];
    if (step?.kind === 'fail') return { kind: 'fail', status: step.status };
    if (step?.kind === 'tool') {
      return {
        kind: 'tool',
        name: resolveToolName(step.name, offeredTools),
        input: substituteDeep(step.input, vars),
        slow: step.slow || script.slow,
      };
    }
    if (step?.kind === 'say') return { kind: 'text', text: substitute(step.text, vars), slow: step.slow || script.slow };
    if (round > 0) return { kind: 'text', text: `FAKE_REPLY(${n}): tool returned: ${conversation.lastResult ?? ''}`, slow: script.slow };
    return { kind: 'text', text: `FAKE_REPLY(${n}): ${conversation.prompt}`, slow: script.slow };
  })();
  return { reply, conversation, script };
}
