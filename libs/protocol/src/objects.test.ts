import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { StringPool, withFields } from './objects.js';

it('copies as a spread does, leaving its base as it was', () => {
  const base = { a: 1, b: { c: 2 }, d: 'x' };
  const out = withFields(base, { d: 'y', e: true });
  expect(out).toEqual({ ...base, d: 'y', e: true });
  expect(Object.keys(out)).toEqual(Object.keys({ ...base, d: 'y', e: true }));
  expect(base).toEqual({ a: 1, b: { c: 2 }, d: 'x' });
  expect(out.b).toBe(base.b);
});

it('keeps a client\'s "__proto__" key a field, as a spread does, never the copy\'s prototype', () => {
  const fromClient = JSON.parse('{"__proto__": {"shrooms/from": "forged"}, "note": "hi"}') as Record<string, unknown>;
  for (const out of [withFields(fromClient, { at: 1 }), withFields({ at: 1 }, fromClient)] as Record<string, unknown>[]) {
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out['shrooms/from']).toBeUndefined();
    expect(Object.keys(out).sort()).toEqual(['__proto__', 'at', 'note']);
    expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse('{"__proto__": {"shrooms/from": "forged"}, "note": "hi", "at": 1}'));
  }
});

it('gives its copies one hidden class where a spread gave each its own (Node 20)', () => {
  // V8's own answer, from a process started with --allow-natives-syntax (a test worker cannot be).
  const script = `
import { withFields } from ${JSON.stringify(fileURLToPath(new URL('./objects.ts', import.meta.url)))};
const made = [];
for (let i = 0; i < 500; i++) made.push(withFields({ id: 'm' + i, at: 1.7e12 + i }, { quiet: true, n: i }));
let apart = 0;
for (const m of made) if (!%HaveSameMap(made[0], m)) apart++;
console.log(apart);
`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(Number(out.trim().split('\n').at(-1))).toBe(0);
});

it('keeps every text as it was and at most its size of them (that each is kept once: the memory tests)', () => {
  const pool = new StringPool(2);
  const texts = ['TASK_STATE_COMPLETED', 'laptop', 'TASK_STATE_COMPLETED', 'demo', `${'lap'}${'top'}`, 'demo'];
  expect(texts.map((t) => pool.share(JSON.parse(JSON.stringify(t)) as string))).toEqual(texts);
  expect(pool.size).toBe(2);
});
