/**
 * The page script as the gateway serves it: the compiled modules of ../app/ (test/page.setup.ts
 * builds them), read from the package's dist/browser/app/ as the gateway reads them.
 */
import { describe, expect, it } from 'vitest';
import { ENTRY, loadScripts, page } from './page.js';

const scripts = loadScripts()!;

describe('the page script', () => {
  it('is ES modules that import only each other, all reached from app.js, with no markup from strings', () => {
    expect(scripts, 'dist/browser/app/ is built').toBeDefined();
    const seen = new Set<string>();
    const todo = [ENTRY];
    for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
      if (seen.has(name)) continue;
      seen.add(name);
      const body = scripts.get(name)?.body;
      expect(body, `${name} is served`).toBeDefined();
      expect(body, name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|(src|href)=["']?(https?:)?\/\//);
      expect(body, name).not.toMatch(/\bimport\s*\(|\brequire\(/);
      for (const [, spec] of body!.matchAll(/^(?:import|export)\s[^;]*?['"]([^'"]+)['"];$/gm)) {
        expect(spec, `${name} imports ${spec}`).toMatch(/^\.\/[a-z][a-z0-9-]*\.js$/);
        todo.push(spec!.slice(2));
      }
    }
    expect([...seen].sort()).toEqual([...scripts.keys()]);
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

  it('is missing, not broken, where the sources were never built', () => {
    expect(loadScripts(new URL('./no-such-folder/', import.meta.url))).toBeUndefined();
  });
});
