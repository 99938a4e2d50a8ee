/**
 * The dashboard's page and its two files, each with a content hash for ETag and cache busting.
 * Nothing is loaded from anywhere else, so the page works offline; the Content-Security-Policy
 * allows only this server's own script and styles, so even a text that slipped past escaping could
 * not run.
 */
import { createHash } from 'node:crypto';
import { APP_JS } from './app-js.js';
import { APP_CSS } from './styles.js';

export interface Asset {
  body: string;
  type: string;
  etag: string;
}

function asset(body: string, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export const SCRIPT = asset(APP_JS, 'text/javascript; charset=utf-8');
export const STYLES = asset(APP_CSS, 'text/css; charset=utf-8');

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The page shell; the script fills it. `machine` is escaped (it is only shown in the title). */
export function page(machine: string): Asset {
  const m = escapeHtml(machine);
  const v = (a: Asset) => encodeURIComponent(a.etag.slice(1, 9));
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
<link rel="stylesheet" href="/dashboard/app.css?v=${v(STYLES)}">
<script src="/dashboard/app.js?v=${v(SCRIPT)}" defer></script>
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
