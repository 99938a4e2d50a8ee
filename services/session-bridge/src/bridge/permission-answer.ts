/**
 * What an answer to a permission prompt means (docs/security.md). Exactly `allow` or `deny` — the
 * whole text of the message (case and surrounding blanks aside), or a data part `{"answer": "allow"}`
 * (or the bare string) — and nothing else: `go away`, `yes`, `allow it` or an empty message are no
 * answer, and the prompt is asked again. A loose reading approved tools on words that meant no.
 */
import type { Message } from '@shrooms/protocol';

export type PermissionAnswer = 'allow' | 'deny';

const WORD = /^\s*(allow|deny)\s*$/i;

function answerOf(value: unknown): PermissionAnswer | undefined {
  if (typeof value === 'string') {
    const m = WORD.exec(value);
    return m ? (m[1]!.toLowerCase() as PermissionAnswer) : undefined;
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    return Object.keys(o).length === 1 ? answerOf(o.answer) : undefined;
  }
  return undefined;
}

/** `allow` or `deny` when the message's one part says exactly that; undefined: ask again. */
export function parsePermissionAnswer(message: Pick<Message, 'parts'>): PermissionAnswer | undefined {
  if (message.parts.length !== 1) return undefined;
  const part = message.parts[0]!;
  if (typeof part.text === 'string') return answerOf(part.text);
  if (part.data !== undefined) return answerOf(part.data);
  return undefined;
}
