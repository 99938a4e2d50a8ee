// The house's rules in eslint.config.js, each shown to refuse what it is for (and to let the
// allowed case through), so a config change cannot quietly switch one off.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function rulesHit(code: string, filePath: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath });
  return (r?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('the lint rules', () => {
  it('refuse a service importing another service', async () => {
    expect(await rulesHit("import { runGuard } from '@shrooms/guard';\nrunGuard();\n", 'services/gateway/src/x.ts')).toContain(
      'no-restricted-imports',
    );
    expect(await rulesHit("import { runScheduler } from '@shrooms/scheduler';\nrunScheduler();\n", 'services/guard/src/x.ts')).toContain(
      'no-restricted-imports',
    );
  });

  it('let the CLI package import the services it starts', async () => {
    expect(await rulesHit("import { runGuard } from '@shrooms/guard';\nrunGuard();\n", 'services/shrooms-agent/src/x.ts')).toEqual([]);
  });

  it('refuse deep imports into a workspace package, by name or by path', async () => {
    expect(await rulesHit("import { ERRORS } from '@shrooms/protocol/src/errors.js';\nERRORS;\n", 'libs/client/src/x.ts')).toContain(
      'no-restricted-imports',
    );
    expect(await rulesHit("import { ERRORS } from '../../protocol/src/errors.js';\nERRORS;\n", 'libs/client/src/x.ts')).toContain(
      'no-restricted-imports',
    );
  });

  it('ask for `import type` when only types are used', async () => {
    expect(
      await rulesHit("import { Task } from '@shrooms/protocol';\nexport const f = (t: Task) => t;\n", 'libs/client/src/x.ts'),
    ).toContain('@typescript-eslint/consistent-type-imports');
  });

  it('refuse `export *` in a front door, not elsewhere', async () => {
    expect(await rulesHit("export * from './x.js';\n", 'libs/client/src/index.ts')).toContain('no-restricted-syntax');
    expect(await rulesHit("export * from './x.js';\n", 'libs/client/src/inner.ts')).toEqual([]);
  });

  it('refuse a file over 300 lines without a note at its top saying why, in source and tests alike', async () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';
    expect(await rulesHit(body(300), 'libs/client/src/x.ts')).toEqual([]);
    expect(await rulesHit(body(301), 'libs/client/src/x.ts')).toContain('house/long-file-note');
    expect(await rulesHit(body(301), 'test/e2e/x.test.ts')).toContain('house/long-file-note');
    expect(await rulesHit(body(301), 'scripts/x.mjs')).toContain('house/long-file-note');
    const why = '/**\n * What it is.\n *\n * Over 300 lines: one table, read whole.\n */\n';
    expect(await rulesHit(why + body(301), 'libs/client/src/x.ts')).toEqual([]);
    expect(await rulesHit('#!/usr/bin/env node\n// What it is. Over 300 lines: one generator.\n' + body(301), 'scripts/x.mjs')).toEqual([]);
    // The note is at the top, before the code, not somewhere below it.
    expect(await rulesHit(body(301) + '// Over 300 lines: too late.\n', 'libs/client/src/x.ts')).toContain('house/long-file-note');
  });
});
