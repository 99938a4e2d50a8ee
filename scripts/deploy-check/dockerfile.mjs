/**
 * The Dockerfile, checked without a Docker engine: every path it copies from the context exists
 * and is not excluded by its .dockerignore; the pnpm it installs is the workspace's
 * packageManager; the packages it filters exist; it installs from the lockfile; the runtime stage
 * runs as a non-root user with the `shrooms-agent` entrypoint that is the CLI's `bin`.
 * (`--image` in check-deploy also runs the build stage's commands in a temporary folder.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { workspacePackages } from './util.mjs';

/** Instructions with continuation lines joined and comments dropped: [{ op, args, line }]. */
export function parseDockerfile(text) {
  const out = [];
  let buf = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!buf && /^\s*(#|$)/.test(line)) return;
    if (buf && /^\s*#/.test(line)) return;
    if (!buf) start = i + 1;
    if (/\\\s*$/.test(line)) {
      buf += line.replace(/\\\s*$/, ' ');
      return;
    }
    buf += line;
    const m = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(buf);
    if (m) out.push({ op: m[1].toUpperCase(), args: m[2].trim(), line: start });
    buf = '';
  });
  return out;
}

function ignoreMatcher(patterns) {
  const rules = patterns.map((p) => {
    const neg = p.startsWith('!');
    const glob = (neg ? p.slice(1) : p).replace(/^\/+|\/+$/g, '');
    const re = glob
      .split('/')
      .map((seg) =>
        seg === '**'
          ? '(?:.*)'
          : seg
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
      )
      .join('/')
      .replace(/\(\?:\.\*\)\//g, '(?:.*/)?');
    return { neg, re: new RegExp(`^${re}(?:/.*)?$`) };
  });
  return (path) => rules.reduce((ignored, r) => (r.re.test(path) ? !r.neg : ignored), false);
}

export function checkDockerfile({ file, contextDir, report, repoRoot }) {
  const name = relative(repoRoot, file);
  if (!existsSync(file)) return report.fail(name, 'missing');
  const ins = parseDockerfile(readFileSync(file, 'utf8'));
  const ignoreFile = [`${file}.dockerignore`, join(contextDir, '.dockerignore')].find(existsSync);
  const ignored = ignoreMatcher(
    ignoreFile
      ? readFileSync(ignoreFile, 'utf8')
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l && !l.startsWith('#'))
      : [],
  );
  const problems = [];
  const args = {};
  const stages = [];
  for (const i of ins) {
    if (i.op === 'ARG' && stages.length === 0) {
      const [k, v] = i.args.split('=');
      args[k] = v;
    }
    if (i.op === 'FROM') {
      const image = i.args.split(/\s+/)[0].replace(/\$\{?(\w+)\}?/g, (_, k) => args[k] ?? '');
      stages.push({ image, as: /\s+AS\s+(\S+)/i.exec(i.args)?.[1], ins: [] });
      if (!image) problems.push(`line ${i.line}: FROM has no image (ARG default missing?)`);
    } else if (stages.length) stages.at(-1).ins.push(i);
  }
  if (stages.length < 2) problems.push('not multi-stage: the runtime image would carry the build tools');

  const root = JSON.parse(readFileSync(join(contextDir, 'package.json'), 'utf8'));
  const pnpmPinned = /^pnpm@(.+)$/.exec(root.packageManager ?? '')?.[1];
  const packages = workspacePackages(contextDir);
  let installsPinnedPnpm = false;
  let frozen = false;
  let deploysProd = false;
  for (const stage of stages) {
    for (const i of stage.ins) {
      if (i.op === 'COPY' || i.op === 'ADD') {
        const parts = i.args.split(/\s+/).filter((p) => !p.startsWith('--'));
        if (/--from=/.test(i.args)) continue;
        for (const src of parts.slice(0, -1)) {
          const rel = src.replace(/^\.\/?/, '').replace(/\/$/, '');
          if (!existsSync(join(contextDir, rel))) problems.push(`line ${i.line}: COPY ${src}: not in the build context`);
          else if (rel && ignored(rel)) problems.push(`line ${i.line}: COPY ${src}: excluded by ${relative(repoRoot, ignoreFile)}`);
        }
      }
      if (i.op === 'RUN') {
        const pnpmInstall = /npm (?:i|install) -g pnpm@(\S+)/.exec(i.args);
        if (pnpmInstall) {
          installsPinnedPnpm = pnpmInstall[1] === pnpmPinned;
          if (!installsPinnedPnpm)
            problems.push(`line ${i.line}: installs pnpm@${pnpmInstall[1]}, the workspace pins ${root.packageManager}`);
        }
        if (/pnpm install[^&;]*--frozen-lockfile/.test(i.args)) frozen = true;
        for (const m of i.args.matchAll(/--filter[= ]+["']?([^"'\s]+)["']?/g)) {
          const pkg = m[1].replace(/^\.\.\.|\.\.\.$/g, '').replace(/\^/g, '');
          if (!packages.has(pkg)) problems.push(`line ${i.line}: --filter ${m[1]}: no workspace package ${pkg}`);
        }
        if (/pnpm [^&;]*deploy[^&;]*--prod/.test(i.args)) deploysProd = true;
      }
    }
  }
  if (!installsPinnedPnpm && !problems.some((p) => p.includes('installs pnpm')))
    problems.push(`does not install the pinned pnpm (${root.packageManager})`);
  if (!frozen) problems.push('never runs pnpm install --frozen-lockfile');
  if (!deploysProd) problems.push('never runs pnpm deploy --prod: the runtime image would carry dev dependencies');

  const last = stages.at(-1);
  const user = last?.ins.filter((i) => i.op === 'USER').at(-1)?.args;
  if (!user || /^(root|0)(:|$)/.test(user)) problems.push(`the runtime stage runs as ${user ?? 'root'}; it must be a non-root user`);
  const entry = last?.ins.filter((i) => i.op === 'ENTRYPOINT').at(-1)?.args;
  if (!entry || !/shrooms-agent/.test(entry))
    problems.push(`the runtime stage's ENTRYPOINT is ${entry ?? 'unset'}; expected the shrooms-agent CLI`);
  const cliDir = packages.get('@shrooms/shrooms-agent');
  const bin = cliDir && JSON.parse(readFileSync(join(contextDir, cliDir, 'package.json'), 'utf8')).bin?.['shrooms-agent'];
  if (!bin) problems.push('services/shrooms-agent has no bin "shrooms-agent"');
  else {
    // The runtime links the CLI's bin, or its bundle made from that bin in an earlier stage
    // (`node scripts/bundle.mjs --entry /app/<bin> --out /app/<dir>` links `<dir>/main.js`).
    const binPath = bin.replace(/^\.\//, '');
    const bundled = stages
      .flatMap((st) => st.ins)
      .map((i) => (i.op === 'RUN' ? /scripts\/bundle\.mjs --entry \/app\/(\S+) --out \/app\/(\S+)/.exec(i.args) : null))
      .find((m) => m && m[1] === binPath);
    const linkable = [binPath, ...(bundled ? [`${bundled[2]}/main.js`] : [])];
    if (!last?.ins.some((i) => i.op === 'RUN' && linkable.some((f) => i.args.includes(f))))
      problems.push(`the runtime stage never links the CLI's bin (${bin}) or its bundle`);
  }

  for (const p of problems) report.fail(name, p);
  if (!problems.length)
    report.ok(
      name,
      `${stages.length} stages; context paths exist; pnpm ${pnpmPinned}; frozen lockfile; deploy --prod; runs as ${user}; entrypoint ${entry}`,
    );
}
