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
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
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
  await esbuild.build({
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
    // Bundled CommonJS packages require node's modules: give them a require of their own.
    banner: { js: "import { createRequire as __shroomsRequire } from 'node:module'; const require = __shroomsRequire(import.meta.url);" },
    plugins: [metaUrl],
  });
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
