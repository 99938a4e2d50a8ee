import { describe, expect, it } from 'vitest';
import { stamped, WRITE_IDS, writeId } from './entry.js';

describe('write ids', () => {
  it('are 8 characters of base64url, none repeated across several refills of the pool', () => {
    const ids = Array.from({ length: 2_000 }, () => writeId());
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('stamp a write over its base: the base’s last ids kept, the fresh one last', () => {
    let entry = stamped({ v: 1, task: {} as never, events: [] }, undefined);
    expect(entry.entry.w).toEqual([entry.id]);
    const ids = [entry.id];
    for (let v = 2; v <= WRITE_IDS + 2; v++) {
      entry = stamped({ v, task: {} as never, events: [] }, entry.entry);
      ids.push(entry.id);
    }
    expect(entry.entry.w).toEqual(ids.slice(-WRITE_IDS));
  });
});
