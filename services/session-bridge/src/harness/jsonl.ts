/**
 * JSON Lines framing for the harness CLIs' stdout: records end at `\n` and only there. Node's
 * `readline` also splits on U+2028/U+2029, which are valid inside JSON strings (pi's RPC docs warn
 * about it), and a multi-byte character can be cut between two chunks — so neither is used here.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';

export class JsonlSplitter {
  private buf = '';
  private readonly decoder = new StringDecoder('utf8');

  /** Complete lines in this chunk (without `\n`, a trailing `\r` removed, empty lines skipped). */
  push(chunk: Buffer | string): string[] {
    this.buf += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const lines: string[] = [];
    let i: number;
    while ((i = this.buf.indexOf('\n')) >= 0) {
      const line = trimCr(this.buf.slice(0, i));
      this.buf = this.buf.slice(i + 1);
      if (line.trim()) lines.push(line);
    }
    return lines;
  }

  /** What is left when the stream ends (a last line without `\n`). */
  end(): string[] {
    const rest = trimCr(this.buf + this.decoder.end());
    this.buf = '';
    return rest.trim() ? [rest] : [];
  }
}

function trimCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** Calls `onValue` with each parsed line of `stream`, `onBad` with a line that is not JSON. */
export function readJsonl(stream: Readable, onValue: (value: unknown) => void, onBad: (line: string) => void = () => {}): void {
  const splitter = new JsonlSplitter();
  const emit = (line: string) => {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      onBad(line);
      return;
    }
    onValue(v);
  };
  stream.on('data', (chunk: Buffer | string) => splitter.push(chunk).forEach(emit));
  stream.on('end', () => splitter.end().forEach(emit));
}
