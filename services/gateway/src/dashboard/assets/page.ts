/**
 * The dashboard's page and its script, each with a content hash for ETag and cache busting.
 * Nothing is loaded from anywhere else, so the page works offline; the Content-Security-Policy
 * allows only this server's own script and the page's own styles, so even a text that slipped past
 * escaping could not run or restyle the page.
 *
 * The script is browser TypeScript (../app/) that tsc compiles, with the gateway, to ES modules in
 * the package's dist/browser/app/: the page loads `app.js`, which imports the others beside it
 * (`/dashboard/NAME.js`). They are read once, when the dashboard is registered. `boot.js` is not
 * loaded but written into the page itself, its hash in the policy: it is what loads the page again
 * when a module was cut short, so it must not be one more load that can be. The stylesheet is in the
 * page too, by its hash: a stylesheet load cut by a network change left the page unstyled until the
 * person reloaded it, and 12 KB cost less than a load that can fail.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { APP_CSS } from './styles.js';

export interface Asset {
  body: string;
  type: string;
  etag: string;
}

export function asset(body: string, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/**
 * Where tsc puts the page's modules (app/tsconfig.json): the same place from this file in src/
 * (development) and in dist/ (compiled, packed, in the image), three folders below the package.
 */
export const SCRIPTS_DIR = new URL('../../../dist/browser/app/', import.meta.url);
/** The module the page loads; it imports the others. */
export const ENTRY = 'app.js';
/** The module in the page before it (inline), which loads the page again when the script did not load. */
export const BOOT = 'boot.js';

/** An import of a module beside it, as tsc emits one (`import { x } from './y.js';`). */
const SIBLING_IMPORT = /^(?:import|export)\s[^;]*?['"]\.\/([a-z][a-z0-9-]*\.js)['"];$/gm;

/**
 * The page's modules by file name: boot.js, app.js and what it imports, transitively (a stale file
 * left in the folder by an earlier build is not served); undefined when they are not built.
 */
export function loadScripts(dir: URL = SCRIPTS_DIR): Map<string, Asset> | undefined {
  const found = new Map<string, Asset>();
  const todo = [ENTRY, BOOT];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (found.has(name)) continue;
    let body: string;
    try {
      body = readFileSync(new URL(name, dir), 'utf8');
    } catch {
      return undefined;
    }
    found.set(name, asset(body, 'text/javascript; charset=utf-8'));
    for (const [, dep] of body.matchAll(SIBLING_IMPORT)) todo.push(dep!);
  }
  return new Map([...found].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** `text` as it is for the page's `element`, or undefined when it would end that element early. */
function inline(text: string | undefined, element: 'script' | 'style'): string | undefined {
  return text !== undefined && !new RegExp(`</${element}|<!--`, 'i').test(text) ? text : undefined;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The policy of every dashboard response: scripts from this server and the page's one inline
 * module by its hash (`scripts`' boot.js; none when it is not built), styles only the page's own
 * stylesheet, by its hash (no style attributes, no other sheet).
 */
export const csp = (scripts: ReadonlyMap<string, Asset>, css: string = APP_CSS): string => {
  const boot = inline(scripts.get(BOOT)?.body, 'script');
  const styles = inline(css, 'style');
  return [
    "default-src 'none'",
    `script-src 'self'${boot === undefined ? '' : ` ${sha256(boot)}`}`,
    `style-src ${styles === undefined ? "'none'" : sha256(styles)}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The page shell; the script fills it. `machine` is escaped (it is only shown in the title). The
 * script's version covers all its modules: a change in any of them is a new URL for `app.js`.
 */
export function page(machine: string, scripts: ReadonlyMap<string, Asset>, css: string = APP_CSS): Asset {
  const m = escapeHtml(machine);
  const v = (a: Asset) => encodeURIComponent(a.etag.slice(1, 9));
  const all = asset([...scripts.values()].map((a) => a.etag).join('\n'), '');
  const boot = inline(scripts.get(BOOT)?.body, 'script');
  const styles = inline(css, 'style');
  return asset(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>shrooms · ${m}</title>
<link rel="icon" href="data:,">
${styles === undefined ? '' : `<style>${styles}</style>\n`}${boot === undefined ? '' : `<script type="module">${boot}</script>\n`}<script type="module" src="/dashboard/${ENTRY}?v=${v(all)}"></script>
</head>
<body>
<header class="top">
  <h1>shrooms mesh <span class="machine" id="machine">· ${m}</span></h1>
  <span class="live" id="live" data-live="0">connecting…</span>
  <span class="viewer" id="viewer"></span>
</header>
<nav class="tabs" id="tabs" aria-label="views"></nav>
<main id="main"><p class="empty">Loading…</p></main>
<noscript><p class="empty">This dashboard needs JavaScript (served by this gateway; nothing is fetched from elsewhere).</p></noscript>
</body>
</html>
`,
    'text/html; charset=utf-8',
  );
}
