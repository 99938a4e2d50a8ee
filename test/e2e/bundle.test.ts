/**
 * The bundled CLI (services/shrooms-agent/bundle, what `./shrooms`, `up`, the units and the image run)
 * asks Node for its own modules (`process.getBuiltinModule`), never imports them (scripts/bundle.mjs,
 * builtinsAsked): on Node 22 and 24 an ESM import of `node:http` alone loads undici, http2 and zlib
 * into every process. Runs on each Node the suite runs on; the loading check can only fail on 22 and
 * later, the check of the files on any.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT } from '@shrooms/testing';
import { expect, it } from 'vitest';

const BUNDLE = join(REPO_ROOT, 'services', 'shrooms-agent', 'bundle');
const files = () => readdirSync(BUNDLE).filter((f) => f.endsWith('.js'));

it("has no ESM import of one of Node's modules in the bundle's files", () => {
  const names = builtinModules.filter((m) => !m.startsWith('_')).join('|');
  const esmImport = new RegExp(`(from|import)\\s*\\(?\\s*["'](node:[\\w/]+|(${names}))["']`, 'g');
  const found: string[] = [];
  for (const f of files()) {
    const text = readFileSync(join(BUNDLE, f), 'utf8');
    for (const m of text.matchAll(esmImport)) found.push(`${f}: ${m[0]}`);
  }
  expect(files().length).toBeGreaterThan(1);
  expect(found).toEqual([]);
});

it("loads neither undici nor http2 nor zlib with the modules of the bundle's services", () => {
  // Every shared chunk is what a service's process loads (the entry files would run a command).
  const chunks = files().filter((f) => f.startsWith('chunk-'));
  const script = `
    for (const f of ${JSON.stringify(chunks)}) await import('./' + f);
    const loaded = process.moduleLoadList.map((m) => m.replace(/^NativeModule /, ''));
    process.stdout.write(JSON.stringify({ loaded }));
    process.exit(0);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: BUNDLE, encoding: 'utf8', timeout: 60_000 });
  const { loaded } = JSON.parse(out) as { loaded: string[] };
  // The chunks did load Node's modules (net for NATS, http for the gateway), asked of Node.
  expect(loaded).toEqual(expect.arrayContaining(['net', 'http']));
  expect(loaded.filter((m) => /^(internal\/deps\/undici\/undici|http2|zlib)$/.test(m))).toEqual([]);
});
