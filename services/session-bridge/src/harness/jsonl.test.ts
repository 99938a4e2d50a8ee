import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { JsonlSplitter, readJsonl } from './jsonl.js';

describe('JSONL framing', () => {
  it('splits on \\n only, never on U+2028 or U+2029 inside a string', () => {
    const s = new JsonlSplitter();
    const record = JSON.stringify({ text: 'a\u2028b\u2029c' });
    expect(s.push(`${record}\n{"n":2}\r\n`)).toEqual([record, '{"n":2}']);
  });

  it('joins a line and a multi-byte character cut between chunks', () => {
    const s = new JsonlSplitter();
    const bytes = Buffer.from('{"t":"ä€"}\n', 'utf8');
    expect(s.push(bytes.subarray(0, 8))).toEqual([]);
    expect(s.push(bytes.subarray(8))).toEqual(['{"t":"ä€"}']);
  });

  it('keeps a last line without a newline until the end, and skips blank lines', () => {
    const s = new JsonlSplitter();
    expect(s.push('\n\n{"a":1}')).toEqual([]);
    expect(s.end()).toEqual(['{"a":1}']);
  });

  it('hands parsed values and bad lines apart', async () => {
    const stream = new PassThrough();
    const values: unknown[] = [];
    const bad: string[] = [];
    readJsonl(
      stream,
      (v) => values.push(v),
      (l) => bad.push(l),
    );
    stream.end('{"a":1}\nnot json\n[2]');
    await new Promise((r) => stream.on('end', r));
    expect(values).toEqual([{ a: 1 }, [2]]);
    expect(bad).toEqual(['not json']);
  });
});
