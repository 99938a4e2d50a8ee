/**
 * `--image`: the Dockerfile's build stage without Docker. Copies what its COPY lines copy (minus
 * .dockerignore) into a temp folder, runs its RUN lines there (`/app` → a temp folder, cache
 * mounts and the pnpm store option dropped, the pnpm install skipped when the pinned pnpm is
 * already here), then runs the runtime stage's entrypoint from the result: `shrooms-agent --help`.
 * Needs the npm registry (pnpm verifies the lockfile), so CI runs without it.
 */
import { execSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseDockerfile } from './dockerfile.mjs';

export function checkImageBuild({ file, contextDir, report, repoRoot }) {
  const what = `${relative(repoRoot, file)} build stage, run here`;
  const ins = parseDockerfile(readFileSync(file, 'utf8'));
  const stages = [];
  for (const i of ins)
    if (i.op === 'FROM') stages.push([]);
    else if (stages.length) stages.at(-1).push(i);
  const [build, runtime] = [stages[0], stages.at(-1)];
  const tmp = mkdtempSync(join(tmpdir(), 'shrooms-image-'));
  const src = join(tmp, 'src');
  const app = join(tmp, 'app');
  mkdirSync(src);
  const skip = /(^|\/)(node_modules|dist)(\/|$)|\.tsbuildinfo$/;
  try {
    for (const i of build) {
      if (i.op === 'WORKDIR' && i.args !== '/src') throw new Error(`WORKDIR ${i.args}: the simulation knows /src only`);
      if (i.op === 'COPY' && !/--from=/.test(i.args)) {
        const parts = i.args.split(/\s+/).filter((p) => !p.startsWith('--'));
        const dest = parts.at(-1);
        for (const s of parts.slice(0, -1)) {
          const target = dest.endsWith('/') && parts.length > 2 ? join(src, dest, s) : join(src, dest === './' ? s : dest);
          mkdirSync(dirname(target), { recursive: true });
          cpSync(join(contextDir, s), target, { recursive: true, filter: (p) => !skip.test(relative(contextDir, p)) });
        }
      }
      if (i.op === 'RUN') {
        let cmd = i.args
          .replace(/--mount=\S+\s*/g, '')
          .replace(/--store-dir \S+\s*/g, '')
          .replaceAll('/app', app);
        const pin = /npm (?:i|install) -g pnpm@(\S+)/.exec(cmd)?.[1];
        if (pin) {
          const have = spawnSync('pnpm', ['--version'], { encoding: 'utf8' }).stdout?.trim();
          if (have !== pin) throw new Error(`pnpm ${have ?? 'missing'} here; the image installs ${pin}: run npm i -g pnpm@${pin}`);
          continue;
        }
        execSync(cmd, { cwd: src, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' }, timeout: 600_000 });
      }
    }
    const entry = runtime
      .filter((i) => i.op === 'RUN')
      .map((i) => /ln -s (\S+) \S*shrooms-agent/.exec(i.args)?.[1])
      .find(Boolean);
    if (!entry) throw new Error('the runtime stage links no shrooms-agent');
    const main = entry.replace(/^\/app/, app);
    if (!existsSync(main)) throw new Error(`${entry} is not in the deployed app`);
    const r = spawnSync(process.execPath, [main, '--help'], {
      encoding: 'utf8',
      cwd: app,
      env: { PATH: process.env.PATH, NODE_ENV: 'production' },
    });
    if (r.status !== 0) throw new Error(`shrooms-agent --help from the deployed app failed: ${r.stderr}`);
    report.ok(
      what,
      `install, build and deploy --prod succeeded; the deployed CLI runs (${r.stdout.split('\n').filter((l) => /^ {2}\w/.test(l)).length} commands)`,
    );
  } catch (err) {
    const out = `${err.stdout ?? ''}\n${err.stderr ?? ''}`.split('\n');
    const errors = out.filter((l) => /error|ERR_/i.test(l)).slice(0, 8);
    report.fail(what, (errors.length ? errors : out.filter(Boolean).slice(-3)).join(' | ') || err.message);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
