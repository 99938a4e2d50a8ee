import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Part, Task } from '@shrooms/protocol';
import { tempDir } from '@shrooms/testing';
import { expect, it } from 'vitest';
import { receiveReturned } from './attachments.js';

/** A task its worker finished, returning `parts` beside its summary (as the ledger's `complete` stores them). */
const finished = (state: string, parts: Part[]): Task =>
  ({
    id: 's:m-1',
    contextId: 'c',
    status: { state },
    artifacts: [{ artifactId: 'a', parts: [{ text: 'done' }, ...parts] }],
  }) as unknown as Task;

it("writes returned files under the asker's folder, and lists links and data without fetching anything", async () => {
  const dir = await tempDir('received');
  try {
    const t = finished('TASK_STATE_COMPLETED', [
      { raw: Buffer.from('a,b\n').toString('base64'), filename: '../../escape.csv', mediaType: 'text/csv' },
      { url: 'https://example.org/x.png', filename: 'x.png' },
      { data: { rows: 2 } },
    ]);
    const lines = await receiveReturned(dir.path, 'box/s:m-1', t);
    const rel = join('.shrooms', 'received', 'box_s_m-1');
    expect(lines).toEqual([
      `Returned with it (files are under ${rel}/ in your working directory):`,
      `- file ${join(rel, 'escape.csv')} (4 bytes, text/csv)`,
      '- link https://example.org/x.png (x.png) — not downloaded',
      '- data (JSON):\n{\n  "rows": 2\n}',
    ]);
    expect(await readFile(join(dir.path, rel, 'escape.csv'), 'utf8')).toBe('a,b\n');
    // Nothing of a task that is not completed, nor of a reply that is text alone.
    expect(await receiveReturned(dir.path, 'box/s:m-1', { ...t, status: { state: 'TASK_STATE_WORKING' } } as Task)).toEqual([]);
    expect(await receiveReturned(dir.path, 'box/s:m-1', finished('TASK_STATE_COMPLETED', []))).toEqual([]);
  } finally {
    await dir.remove();
  }
});

it('says a file it could not write, and still answers', async () => {
  const dir = await tempDir('received');
  try {
    // `.shrooms` is a file here: nothing can be written under it.
    await writeFile(join(dir.path, '.shrooms'), '');
    const t = finished('TASK_STATE_COMPLETED', [{ raw: Buffer.from('x').toString('base64'), filename: 'r.txt' }]);
    const [, line] = await receiveReturned(dir.path, 'box/s:m-1', t);
    expect(line).toMatch(/^- file \.shrooms\/received\/box_s_m-1\/r\.txt \(1 bytes\) could not be written: ENOTDIR/);
  } finally {
    await dir.remove();
  }
});
