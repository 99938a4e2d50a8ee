/** Checks on an incoming message before anything is stored: parts, sizes, ids (spec §4, §11). */
import { ShroomsError, isValidMessageId, type Message, type Metadata } from '@shrooms/protocol';

export interface MessageLimits {
  textBytes: number;
  partsPerMessage: number;
  metadataEntries: number;
}

/**
 * A lone UTF-16 surrogate has no UTF-8 form: the key encoding writes U+FFFD for it, so `x\uD800` and
 * `x\uDC00` would name the same task. Such ids are refused before they reach a key.
 */
export const LONE_SURROGATE = /\p{Cs}/u;

/**
 * How deep metadata may nest (a JSON value inside a value …). Deeper values are refused: the task
 * record is written with JSON.stringify, which overflows the stack a few thousand levels down.
 */
export const METADATA_MAX_DEPTH = 32;

export function validateMessage(m: Message, limits: MessageLimits, requestMetadata?: Metadata): void {
  if (!isValidMessageId(m.messageId) || LONE_SURROGATE.test(m.messageId)) {
    throw new ShroomsError('INVALID_PARAMS', 'message.messageId must be 1–128 characters without control characters or lone surrogates');
  }
  if (m.taskId !== undefined && LONE_SURROGATE.test(m.taskId)) {
    throw new ShroomsError('TASK_NOT_FOUND', 'message.taskId contains a lone surrogate; no task has such an id');
  }
  if (m.parts.length > limits.partsPerMessage) {
    throw new ShroomsError(
      'LIMIT_EXCEEDED',
      `a message may carry at most ${limits.partsPerMessage} parts; this one has ${m.parts.length}`,
      {
        limit: 'partsPerMessage',
        max: limits.partsPerMessage,
      },
    );
  }
  let bytes = 0;
  for (const [i, p] of m.parts.entries()) {
    if (typeof p.text !== 'string') {
      const kind = p.raw !== undefined ? 'raw' : p.url !== undefined ? 'url' : p.data !== undefined ? 'data' : 'empty';
      throw new ShroomsError('CONTENT_TYPE_NOT_SUPPORTED', `part ${i} is a ${kind} part; only text parts are accepted`);
    }
    bytes += Buffer.byteLength(p.text, 'utf8');
  }
  if (bytes > limits.textBytes) {
    throw new ShroomsError('LIMIT_EXCEEDED', `message text is ${bytes} bytes; the limit is ${limits.textBytes}`, {
      limit: 'textBytes',
      max: limits.textBytes,
    });
  }
  for (const md of [m.metadata, requestMetadata]) {
    if (md && Object.keys(md).length > limits.metadataEntries) {
      throw new ShroomsError('LIMIT_EXCEEDED', `metadata may have at most ${limits.metadataEntries} entries`, {
        limit: 'metadataEntries',
        max: limits.metadataEntries,
      });
    }
  }
  for (const md of [m.metadata, requestMetadata, ...m.parts.map((p) => p.metadata)]) {
    if (md !== undefined && depthOver(md, METADATA_MAX_DEPTH)) {
      throw new ShroomsError('LIMIT_EXCEEDED', `metadata may nest at most ${METADATA_MAX_DEPTH} levels deep`, {
        limit: 'metadataDepth',
        max: METADATA_MAX_DEPTH,
      });
    }
  }
}

/** True when `value` nests deeper than `max` (walked without recursion, so any depth is safe). */
function depthOver(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) return true;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}
