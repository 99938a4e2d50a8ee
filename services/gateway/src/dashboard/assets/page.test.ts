/**
 * The page script as the gateway serves it: the compiled modules of ../app/ (test/page.setup.ts
 * builds them), read from the package's dist/browser/app/ as the gateway reads them.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScripts, page } from './page.js';

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

  it('loads boot.js first, which loads the page again when the script is cut short', () => {
    const html = page('box', scripts).body;
    const boot = html.indexOf('<script type="module" src="/dashboard/boot.js?v=');
    expect(boot).toBeGreaterThan(0);
    expect(boot).toBeLessThan(html.indexOf('/dashboard/app.js?v='));
    // It imports nothing: the one file arriving is all it needs.
    expect(scripts.get('boot.js')!.body).not.toMatch(/^import\s/m);
  });

  it('is missing, not broken, where the sources were never built', () => {
    expect(loadScripts(new URL('./no-such-folder/', import.meta.url))).toBeUndefined();
  });
});
