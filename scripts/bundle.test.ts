import type * as nodePath from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script in plain JavaScript, without types
import { builtinsAsked, LAZY_REQUIRE } from './bundle.mjs';

const ask = (text: string, statements: number, dynamic = 0): string => builtinsAsked(text, { statements, dynamic }) as string;
type PathModule = typeof nodePath;
const mod = (id: string) => `process.getBuiltinModule("${id}")`;

describe('builtinsAsked: the bundle asks Node for its own modules instead of importing them', () => {
  it('turns each form of import esbuild writes into consts at the head of the file', () => {
    const text =
      'import{a as b}from"./chunk-A.js";import{readFileSync as r,statSync}from"node:fs";import p from"path";' +
      'var x=1;import*as u from"node:util";import h,{request as q}from"node:http";import"node:os";' +
      'import{default as c}from"node:crypto";console.log(r,statSync,p,u,h,q,c,b);';
    expect(ask(text, 6)).toBe(
      `const{readFileSync:r}=${mod('node:fs')};const{statSync:statSync}=${mod('node:fs')};const p=${mod('path')};` +
        `const u=${mod('node:util')};const h=${mod('node:http')};const{request:q}=${mod('node:http')};${mod('node:os')};` +
        `const c=${mod('node:crypto')};` +
        'import{a as b}from"./chunk-A.js";var x=1;console.log(r,statSync,p,u,h,q,c,b);',
    );
  });

  it('keeps the shebang first, and leaves other modules and look-alikes alone', () => {
    const text = '#!/usr/bin/env node\nimport{a}from"./x.js";import{join as j}from"node:path";let reimport=1;x.import("node:fs");';
    expect(ask(text, 1)).toBe(
      `#!/usr/bin/env node\nconst{join:j}=${mod('node:path')};import{a}from"./x.js";let reimport=1;x.import("node:fs");`,
    );
  });

  it("turns import() of one of Node's modules into a promise of it, with the module as default", async () => {
    const out = ask('const m=import("node:path"),n=import("./y.js");', 0, 1);
    expect(out).toBe('const m=__shroomsImport("node:path"),n=import("./y.js");');
    // The banner every file of the bundle starts with, run as a module of its own.
    const banner = (await import(
      `data:text/javascript,${encodeURIComponent(`${LAZY_REQUIRE as string}\nexport { __shroomsImport, require };`)}`
    )) as { __shroomsImport: (id: string) => Promise<PathModule>; require: (id: string) => unknown };
    const path = await banner.__shroomsImport('node:path');
    expect(path.join('a', 'b')).toBe('a/b');
    expect((path as unknown as { default: unknown }).default).toBe(process.getBuiltinModule('node:path'));
    // Its require asks Node for Node's modules first.
    expect(banner.require('node:fs')).toBe(process.getBuiltinModule('node:fs'));
  });

  it('stops the build when it finds other than esbuild wrote', () => {
    expect(() => ask('import{a}from"node:fs";', 2)).toThrow(
      /found 1 imports and 0 import\(\) of Node's modules where esbuild wrote 2 and 0/,
    );
    expect(() => ask('import{a}from"node:fs";', 1, 1)).toThrow(/esbuild wrote 1 and 1/);
  });
});
