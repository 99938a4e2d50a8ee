/**
 * The page script as the gateway serves it: the compiled modules of ../app/ (test/page.setup.ts
 * builds them), read from the package's dist/browser/app/ as the gateway reads them.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { asset, csp, loadScripts, page } from './page.js';
import { APP_CSS } from './styles.js';

const scripts = loadScripts()!;

describe('the page script', () => {
  it('is every module of app/, compiled, with no markup from strings and no import from elsewhere', () => {
    expect(scripts, 'dist/browser/app/ is built').toBeDefined();
    const sources = readdirSync(new URL('../app/', import.meta.url)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect([...scripts.keys()]).toEqual(sources.map((f) => f.replace(/\.ts$/, '.js')).sort());
    for (const [name, { body }] of scripts) {
      expect(body, name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|(src|href)=["']?(https?:)?\/\//);
      expect(body, name).not.toMatch(/\bimport\s*\(|\brequire\(/);
      for (const [, spec] of body.matchAll(/^(?:import|export)\s[^;]*?['"]([^'"]+)['"];$/gm))
        expect(spec, `${name} imports ${spec}`).toMatch(/^\.\/[a-z][a-z0-9-]*\.js$/);
    }
  });

  it('is loaded as a module script whose version changes with any of its modules', () => {
    const html = page('box', scripts).body;
    const v = /<script type="module" src="\/dashboard\/app\.js\?v=([\w-]{8})"><\/script>/.exec(html)?.[1];
    expect(v).toBeDefined();
    const changed = new Map(scripts);
    const [last] = [...changed.keys()].slice(-1);
    changed.set(last!, { ...changed.get(last!)!, etag: '"another"' });
    expect(page('box', changed).body).not.toContain(`app.js?v=${v}`);
  });

  it('holds boot.js inline before app.js, allowed by its hash and by nothing looser', () => {
    const html = page('box', scripts).body;
    const boot = scripts.get('boot.js')!.body;
    const at = html.indexOf(`<script type="module">${boot}</script>`);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(html.indexOf('/dashboard/app.js?v='));
    // It imports nothing: the page arriving is all it needs.
    expect(boot).not.toMatch(/^import\s/m);
    const hash = createHash('sha256').update(boot).digest('base64');
    const policy = csp(scripts).split('; ');
    expect(policy).toContain(`script-src 'self' 'sha256-${hash}'`);
    expect(policy.join(' ')).not.toMatch(/unsafe-inline|unsafe-eval|nonce-/);
  });

  it('leaves out an inline module that would end its script element early, and its hash', () => {
    const broken = new Map(scripts).set('boot.js', asset('say("</script><script>x()")', 'text/javascript'));
    expect(page('box', broken).body).not.toContain('<script type="module">');
    expect(csp(broken)).toContain("script-src 'self';");
  });

  it('is missing, not broken, where the sources were never built', () => {
    expect(loadScripts(new URL('./no-such-folder/', import.meta.url))).toBeUndefined();
  });
});

describe('the page styles', () => {
  it('are in the page itself, allowed by their hash and by nothing else', () => {
    const html = page('box', scripts).body;
    expect(html).toContain(`<style>${APP_CSS}</style>`);
    expect(html).not.toMatch(/<link[^>]*stylesheet/);
    const hash = createHash('sha256').update(APP_CSS).digest('base64');
    expect(csp(scripts).split('; ')).toContain(`style-src 'sha256-${hash}'`);
    expect(csp(scripts)).not.toMatch(/style-src[^;]*('self'|unsafe)/);
  });

  it('are left out, with their hash, when their text would end the style element early', () => {
    const broken = 'a::after { content: "</style><script>x()</script>" }';
    expect(page('box', scripts, broken).body).not.toContain('<style>');
    expect(csp(scripts, broken)).toContain("style-src 'none'");
  });
});
