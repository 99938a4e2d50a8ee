/**
 * Names of agents and tasks (spec §2) and the one encoding that makes user input safe inside a NATS
 * subject token or a KV key.
 *
 * Encoding: letters, digits and `-` stay as they are; every other byte of the UTF-8 form becomes
 * `_XX` (upper-case hex). So `my.session` → `my_2Esession`, `a b` → `a_20b`, `_` → `_5F`. The result
 * is readable for operators, never contains `.`, `*`, `>` or whitespace, and decodes back exactly.
 */
const SAFE = /^[A-Za-z0-9-]$/;
/** A name of safe characters only (most machine and session names) is its own token. */
const ALL_SAFE = /^[A-Za-z0-9-]+$/;

export function encodeToken(raw: string): string {
  if (raw.length === 0) throw new Error('cannot encode an empty token');
  if (ALL_SAFE.test(raw)) return raw;
  let out = '';
  for (const ch of raw) {
    if (SAFE.test(ch)) {
      out += ch;
      continue;
    }
    for (const byte of Buffer.from(ch, 'utf8')) out += '_' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** A token of printable ASCII with no escape decodes to itself (every key the ledger follows). */
const PLAIN = /^[\x20-\x5e\x60-\x7e]*$/;

export function decodeToken(token: string): string {
  if (PLAIN.test(token)) return token;
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    const ch = token[i]!;
    if (ch === '_') {
      const hex = token.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new Error(`bad escape in token ${JSON.stringify(token)}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(ch.charCodeAt(0));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Session and machine names: what a person would type. Bounded so subjects stay short. */
export const NAME_MAX_LENGTH = 64;
export const MESSAGE_ID_MAX_LENGTH = 128;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** What a valid session or machine name is, in words, for error messages. */
export const NAME_RULE = `letters, digits, '.', '_' and '-', starting with a letter or digit, at most ${NAME_MAX_LENGTH} characters`;

export function isValidName(name: string): boolean {
  return name.length > 0 && name.length <= NAME_MAX_LENGTH && NAME_RE.test(name);
}

/** Message ids are the sender's; anything printable goes, within a length. */
export function isValidMessageId(id: string): boolean {
  // eslint-disable-next-line no-control-regex
  return id.length > 0 && id.length <= MESSAGE_ID_MAX_LENGTH && !/[\u0000-\u001f\u007f]/.test(id);
}

export interface AgentName {
  machine: string;
  session: string;
}

export interface TaskName {
  /** Absent when the name was written without a machine (`SESSION:ID`). */
  machine?: string;
  session: string;
  messageId: string;
}

export function formatAgent(a: AgentName): string {
  return `${a.machine}/${a.session}`;
}

/** `MACHINE/SESSION` or a bare `SESSION`. */
export function parseAgent(text: string): { machine?: string; session: string } | undefined {
  const slash = text.indexOf('/');
  const machine = slash >= 0 ? text.slice(0, slash) : undefined;
  const session = slash >= 0 ? text.slice(slash + 1) : text;
  if (!isValidName(session)) return undefined;
  if (machine !== undefined && !isValidName(machine)) return undefined;
  return machine === undefined ? { session } : { machine, session };
}

/** The local task id the A2A surface shows: `SESSION:MESSAGE-ID`. */
export function formatTaskId(session: string, messageId: string): string {
  return `${session}:${messageId}`;
}

export function formatTaskName(t: TaskName): string {
  const local = formatTaskId(t.session, t.messageId);
  return t.machine ? `${t.machine}/${local}` : local;
}

/** `MACHINE/SESSION:ID` or `SESSION:ID`. The message id may itself contain `:` and `/`. */
export function parseTaskName(text: string): TaskName | undefined {
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  const agent = parseAgent(text.slice(0, colon));
  const messageId = text.slice(colon + 1);
  if (!agent || !isValidMessageId(messageId)) return undefined;
  return { ...agent, messageId };
}
