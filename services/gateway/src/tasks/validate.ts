/** Checks on an incoming message before anything is stored: parts, sizes, ids (spec §4, §11). */
import { ShroomsError, isValidMessageId, type Message, type Metadata, type Part } from '@shrooms/protocol';

export interface MessageLimits {
  textBytes: number;
  /** Bytes of one file part (decoded) or data part (as JSON). */
  partBytes: number;
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
    const kinds = (['text', 'raw', 'url', 'data'] as const).filter((k) => p[k] !== undefined);
    if (kinds.length !== 1)
      throw new ShroomsError(
        'INVALID_PARAMS',
        `part ${i} must be exactly one of text, raw, url or data; it has ${kinds.join(', ') || 'none'}`,
      );
    if (typeof p.text === 'string') {
      bytes += Buffer.byteLength(p.text, 'utf8');
      continue;
    }
    checkPart(i, p, limits.partBytes);
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

/** A media type as RFC 6838 writes it (`type/subtype`, parameters allowed). */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;.*)?$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * File and data parts (spec §4 amendments): inline bytes in base64 and data up to `max` bytes each,
 * URLs only http(s) — never fetched by the gateway, handed to the worker as a link.
 */
function checkPart(i: number, p: Part, max: number): void {
  if (p.mediaType !== undefined && !MEDIA_TYPE.test(p.mediaType))
    throw new ShroomsError(
      'CONTENT_TYPE_NOT_SUPPORTED',
      `part ${i}: mediaType ${JSON.stringify(p.mediaType.slice(0, 60))} is not a media type`,
    );
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (p.filename !== undefined && (p.filename.length > 255 || /[\u0000-\u001f]/.test(p.filename)))
    throw new ShroomsError('INVALID_PARAMS', `part ${i}: filename must be at most 255 characters without control characters`);
  let size: number;
  if (p.raw !== undefined) {
    if (typeof p.raw !== 'string' || p.raw.length % 4 === 1 || !BASE64.test(p.raw.replace(/\s/g, '')))
      throw new ShroomsError('INVALID_PARAMS', `part ${i}: raw must be base64`);
    size = Buffer.byteLength(p.raw, 'base64');
  } else if (p.url !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(p.url);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || p.url.length > 2048)
      throw new ShroomsError('INVALID_PARAMS', `part ${i}: url must be an http(s) URL of at most 2048 characters`);
    return;
  } else {
    size = Buffer.byteLength(JSON.stringify(p.data) ?? '', 'utf8');
  }
  if (size > max)
    throw new ShroomsError('LIMIT_EXCEEDED', `part ${i} is ${size} bytes; a file or data part may have at most ${max}`, {
      limit: 'partBytes',
      max,
    });
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
