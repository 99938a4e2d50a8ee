/**
 * The systemd user unit for workstation bridges: `systemd-analyze verify` on an instance of the
 * template (any complaint fails), then: it starts the CLI's `bridge` command, every BRIDGE_*
 * setting it gives is one the bridge's config schema knows, and its default SHROOMS_CLI in a
 * checkout at ~/shrooms names a file the build makes (checked in this built checkout).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { onPath, run } from './util.mjs';

export function checkSystemd({ dir, report, cli, repoRoot }) {
  if (!existsSync(dir)) return report.fail(relative(repoRoot, dir), 'missing');
  for (const f of readdirSync(dir).filter((x) => /\.(service|timer)$/.test(x))) {
    const file = join(dir, f);
    const name = relative(repoRoot, file);
    const text = readFileSync(file, 'utf8');
    const problems = [];
    if (onPath('systemd-analyze')) {
      const tmp = mkdtempSync(join(tmpdir(), 'shrooms-systemd-'));
      try {
        copyFileSync(file, join(tmp, f));
        const unit = f.includes('@.') ? f.replace('@.', '@check.') : f;
        if (unit !== f) symlinkSync(f, join(tmp, unit));
        mkdirSync(join(tmp, 'run'));
        const r = run('systemd-analyze', ['verify', '--man=no', '--user', join(tmp, unit)], {
          env: { ...process.env, XDG_RUNTIME_DIR: join(tmp, 'run') },
        });
        const complaints = r.out.split('\n').filter((l) => l.includes(basename(f)) || l.includes(unit));
        if (r.code !== 0 || complaints.length)
          problems.push(`systemd-analyze verify: ${(complaints.length ? complaints : [r.out]).join('; ')}`);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    } else {
      report.note('systemd-analyze not found: checking the unit by its text only');
      for (const s of ['[Unit]', '[Service]', '[Install]']) if (!text.includes(s)) problems.push(`no ${s} section`);
    }
    const exec = /^ExecStart=(.*)$/m.exec(text)?.[1] ?? '';
    const words = exec.split(/\s+/);
    const cmd = words.find((w) => cli?.commands?.has(w));
    if (!/\bbridge\b/.test(exec)) problems.push(`ExecStart does not run the bridge: ${exec}`);
    else if (cli?.helpOk && !cmd) problems.push(`ExecStart runs no command the CLI has: ${exec}`);
    const schema = readFileSync(join(repoRoot, 'services/session-bridge/src/config.ts'), 'utf8');
    for (const m of text.matchAll(/^Environment=(BRIDGE_[A-Z0-9_]+)=/gm))
      if (!schema.includes(`${m[1]}:`)) problems.push(`sets ${m[1]}, which the bridge's config does not know`);
    const cliDefault = /^Environment=SHROOMS_CLI=%h\/shrooms\/(\S+)$/m.exec(text)?.[1];
    if (cliDefault && !existsSync(join(repoRoot, cliDefault)))
      problems.push(`SHROOMS_CLI defaults to %h/shrooms/${cliDefault}, which the build does not make (pnpm build)`);
    for (const p of problems) report.fail(name, p);
    if (!problems.length)
      report.ok(
        name,
        `${onPath('systemd-analyze') ? 'systemd-analyze verify clean; ' : ''}runs \`shrooms-agent bridge\`; settings known to the bridge`,
      );
  }
}
