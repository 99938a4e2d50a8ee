/** Checks on an incoming message before anything is stored: parts, sizes, ids (spec §4, §11). */
import { ShroomsError, isValidMessageId, type Message, type Metadata } from '@shrooms/protocol';

export interface MessageLimits {
  textBytes: number;
  partsPerMessage: number;
  metadataEntries: number;
}

export function validateMessage(m: Message, limits: MessageLimits, requestMetadata?: Metadata): void {
  if (!isValidMessageId(m.messageId)) {
    throw new ShroomsError('INVALID_PARAMS', 'message.messageId must be 1–128 characters without control characters');
  }
  if (m.parts.length > limits.partsPerMessage) {
    throw new ShroomsError('LIMIT_EXCEEDED', `a message may carry at most ${limits.partsPerMessage} parts; this one has ${m.parts.length}`, {
      limit: 'partsPerMessage',
      max: limits.partsPerMessage,
    });
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
    throw new ShroomsError('LIMIT_EXCEEDED', `message text is ${bytes} bytes; the limit is ${limits.textBytes}`, { limit: 'textBytes', max: limits.textBytes });
  }
  for (const md of [m.metadata, requestMetadata]) {
    if (md && Object.keys(md).length > limits.metadataEntries) {
      throw new ShroomsError('LIMIT_EXCEEDED', `metadata may have at most ${limits.metadataEntries} entries`, { limit: 'metadataEntries', max: limits.metadataEntries });
    }
  }
}
