// Bundles the compiled CLI (services/shrooms-agent/dist/main.js) with every library it loads into a
// few minified files in services/shrooms-agent/bundle/, which is what `./shrooms`, `up`, the units and
// MCP configs run. Measured on an idle bridge (3 of them, 45 s after ready): 57 MB of RSS against
// 60.4 MB for the same code as ~250 separate modules — V8 keeps every module's source text and
// records, and zod alone is half a megabyte of source. Start-up reads one file instead of hundreds.
//
// What it keeps as it was:
// - `import.meta.url` of each bundled module still names that module's own compiled file (its
//   path relative to the bundle), so the files a module finds beside itself (the MCP relay, pi's
//   extension, the permissions generator, harness binaries) are found as before, and a service's
//   "am I the program being run" check stays false inside the CLI.
// - Names (keepNames): errors and classes keep their `name`, stack traces stay readable.
// - `@shrooms/testing` (a development dependency that only `up` loads) stays outside, resolved
//   from the CLI's package as before.
// The docker image runs the unbundled dist/ (its packages sit elsewhere than in the checkout).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';

export const bundleDir = (root) => join(root, 'services', 'shrooms-agent', 'bundle');
export const bundleMissing = (root) => !existsSync(join(bundleDir(root), 'main.js'));

export async function bundleCli(root) {
  const esbuild = createRequire(join(root, 'package.json'))('esbuild');
  const outdir = bundleDir(root);
  rmSync(outdir, { recursive: true, force: true });
  const ours = (file) => file.startsWith(join(root, 'libs') + sep) || file.startsWith(join(root, 'services') + sep);
  const metaUrl = {
    name: 'import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        if (!ours(args.path) || args.path.includes(`${sep}node_modules${sep}`)) return undefined;
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
    entryPoints: [join(root, 'services', 'shrooms-agent', 'dist', 'main.js')],
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
