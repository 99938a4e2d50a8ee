// Bundles the compiled CLI (services/shrooms-agent/dist/main.js) with every library it loads into a
// few minified files in services/shrooms-agent/bundle/, which is what `./shrooms`, `up`, the units and
// MCP configs run. Measured on an idle bridge (3 of them, 45 s after ready): 57 MB of RSS against
// 60.4 MB for the same code as ~250 separate modules — V8 keeps every module's source text and
// records, and zod alone is half a megabyte of source. Start-up reads one file instead of hundreds.
//
// What it keeps as it was:
// - `import.meta.url` of each bundled module still names the file it was bundled from (its path
//   relative to the bundle), so the files a module finds beside itself (the MCP relay, pi's
//   extension, the permissions generator, harness binaries) are found as before, and a service's
//   "am I the program being run" check stays false inside the CLI.
// - Names (keepNames): errors and classes keep their `name`, stack traces stay readable.
// - `@shrooms/testing` (a development dependency that only `up` loads) stays outside, resolved
//   from the CLI's package as before.
// The docker image bundles its own deployed copy the same way (deploy/Dockerfile).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const bundleDir = (root) => join(root, 'services', 'shrooms-agent', 'bundle');
export const bundleMissing = (root) => !existsSync(join(bundleDir(root), 'main.js'));

/**
 * Bundles `entry` (default: the checkout's compiled CLI) into `outdir` (default: bundleDir). The
 * image bundles its deployed copy (/app/dist/main.js → /app/bundle) the same way.
 */
export async function bundleCli(
  root,
  { entry = join(root, 'services', 'shrooms-agent', 'dist', 'main.js'), outdir = bundleDir(root) } = {},
) {
  const esbuild = createRequire(join(root, 'package.json'))('esbuild');
  rmSync(outdir, { recursive: true, force: true });
  // Every bundled module that asks for its own URL gets the URL of the file it was bundled from.
  const metaUrl = {
    name: 'import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.m?js$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const rel = relative(outdir, args.path).split(sep).join('/');
        return {
          contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`),
          loader: 'js',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
  const { outputFiles, metafile } = await esbuild.build({
    entryPoints: [entry],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'warning',
    external: ['@shrooms/testing'],
    banner: { js: LAZY_REQUIRE },
    plugins: [metaUrl],
    write: false,
    metafile: true,
    absWorkingDir: root,
  });
  for (const f of outputFiles) {
    const out = metafile.outputs[relative(root, f.path).split(sep).join('/')];
    if (!out) throw new Error(`bundle: esbuild says nothing of ${f.path}`);
    const ofNode = (kind) => out.imports.filter((i) => i.external && i.kind === kind && isBuiltin(i.path)).length;
    const expected = { statements: ofNode('import-statement'), dynamic: ofNode('dynamic-import') };
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.path.endsWith('.js') ? builtinsAsked(f.text, expected) : f.contents);
  }
}

/**
 * Bundled CommonJS packages `require` Node's modules and, seldom, a file beside them: each file of the
 * bundle gets a `require` that asks Node for its own modules and makes a real one on its first other
 * call. A real one made at once cost every file a createRequire and its path work at start-up: with
 * some 60 files, enough calls that V8's optimising compiler took Node's path functions, whose code
 * pages then stay in an idle process.
 */
export const LAZY_REQUIRE = [
  'let __shroomsRequire;',
  'function require(id) {',
  "  return process.getBuiltinModule(id) ?? (__shroomsRequire ??= process.getBuiltinModule('node:module').createRequire(import.meta.url))(id);",
  '}',
  // What `import(id)` of one of Node's modules gives, its exports and the module as `default`.
  'function __shroomsImport(id) {',
  '  return Promise.resolve().then(() => new Proxy(process.getBuiltinModule(id), { get: (m, k) => (k === "default" ? m : m[k]) }));',
  '}',
].join(' ');

const BUILTINS = new Set(builtinModules);
const isBuiltin = (id) => id.startsWith('node:') || BUILTINS.has(id);
/** An import statement as esbuild writes them (minified): its clause, if any, and its module. */
const IMPORT = /(?<=^|[;})\n])import\s*(?:(?<clause>[^"';()]*?)\s*from\s*)?(?<q>["'])(?<from>[^"']+)\k<q>;?/g;
/** A dynamic import of a named module. */
const DYNAMIC_IMPORT = /(?<![\w$.])import\(\s*(?<q>["'])(?<from>[^"']+)\k<q>\s*\)/g;

/**
 * Node's own modules (`node:fs`, `http`, …) are asked of Node (`process.getBuiltinModule`) in the
 * bundle, never imported: on Node 22 and 24 an ESM import of one of them builds its ESM face by
 * reading every export, which runs the lazy ones. `node:http`'s `WebSocket` loads undici (with http2,
 * zlib and worker threads); `node:process`'s, `node:fs`'s and `node:util`'s load what their getters
 * stand for. Measured on Node 22.23.3 (RSS 3 s after start, those four modules): 56.8 MB imported,
 * 46.0 MB required; Node 24.21.0 58.8 against 45.0. Node 20's ESM face runs none of them.
 *
 * Each such import becomes a `const` of what it imports, at the head of its file: an import is bound
 * before any of its file runs, and so is a `const` there (the modules' exports do not change).
 * A dynamic `import()` of one becomes a promise of the module. `expected` is how many of each esbuild
 * says the file has, so an import this misreads stops the build.
 */
export function builtinsAsked(text, expected) {
  const asks = [];
  let dynamic = 0;
  const body = text
    .replace(IMPORT, (statement, ...args) => {
      const { clause = '', from } = args.at(-1);
      if (!isBuiltin(from)) return statement;
      asks.push(asked(clause, from));
      return '';
    })
    .replace(DYNAMIC_IMPORT, (call, ...args) => {
      const { from } = args.at(-1);
      if (!isBuiltin(from)) return call;
      dynamic++;
      return `__shroomsImport(${JSON.stringify(from)})`;
    });
  if (asks.length !== expected.statements || dynamic !== expected.dynamic)
    throw new Error(
      `bundle: found ${asks.length} imports and ${dynamic} import() of Node's modules where esbuild wrote ` +
        `${expected.statements} and ${expected.dynamic}`,
    );
  const shebang = body.startsWith('#!') ? body.slice(0, body.indexOf('\n') + 1) : '';
  return shebang + asks.join('') + body.slice(shebang.length);
}

/** `import <clause> from "<id>"` as statements that ask Node for module `id`. */
function asked(clause, id) {
  const mod = `process.getBuiltinModule(${JSON.stringify(id)})`;
  if (!clause) return `${mod};`;
  const named = /\{(?<names>[^}]*)\}/.exec(clause)?.groups.names;
  const star = /\*\s*as\s+(?<name>[\w$]+)/.exec(clause)?.groups.name;
  const whole = /^(?<name>[\w$]+)\s*(,|$)/.exec(clause.trim())?.groups.name;
  const out = [];
  // The module object is its default export and its namespace alike.
  for (const name of [whole, star]) if (name) out.push(`const ${name}=${mod};`);
  if (named !== undefined) {
    const pairs = named
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => p.split(/\s+as\s+/));
    for (const [imported, local = imported] of pairs)
      out.push(imported === 'default' ? `const ${local}=${mod};` : `const{${imported}:${local}}=${mod};`);
  }
  if (out.length === 0) throw new Error(`bundle: cannot read the import clause "${clause}" of ${id}`);
  return out.join('');
}

// node scripts/bundle.mjs [--entry FILE --out DIR]: what the image's build stage runs.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { entry: { type: 'string' }, out: { type: 'string' } } });
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  await bundleCli(root, {
    ...(values.entry ? { entry: resolve(values.entry) } : {}),
    ...(values.out ? { outdir: resolve(values.out) } : {}),
  });
}
