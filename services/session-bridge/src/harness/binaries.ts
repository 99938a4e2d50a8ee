/**
 * Where the harness CLIs are. All are pinned dev dependencies of the workspace root; an operator can
 * point elsewhere with SHROOMS_CLAUDE_BIN / SHROOMS_PI_BIN / SHROOMS_GEMINI_BIN / SHROOMS_OPENCODE_BIN /
 * SHROOMS_CODEX_ACP_BIN (in the harness env or the bridge's own: the process env each is given holds both).
 *
 * Claude Code ships a native executable in a per-platform optional dependency
 * (`@anthropic-ai/claude-code-linux-x64`, …); its postinstall links it over the wrapper's
 * `bin/claude.exe`. When install scripts did not run, that file is a ~500-byte stub that exits 1, so
 * we check its size and fall back to the platform package's binary. pi is plain JavaScript: we run
 * its `dist/cli.js` with this Node, skipping the shell shim.
 */
import { existsSync, realpathSync, statSync, readFileSync } from 'node:fs';
import { arch, platform } from 'node:process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Command {
  command: string;
  /** Arguments that come before the harness's own. */
  args: string[];
}

const HERE = dirname(fileURLToPath(import.meta.url));
const STUB_MAX_BYTES = 1_000_000;

/** Node's lookup by hand: `node_modules/<name>` in this folder and every parent. */
function findPackage(name: string, from: string = HERE): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

function isMusl(): boolean {
  if (platform !== 'linux') return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report !== undefined && report.header?.glibcVersionRuntime === undefined;
}

function usable(file: string): boolean {
  try {
    const st = statSync(file);
    return st.isFile() && st.size > STUB_MAX_BYTES;
  } catch {
    return false;
  }
}

export function claudeCommand(env: Record<string, string | undefined> = {}): Command {
  const override = env.SHROOMS_CLAUDE_BIN;
  if (override) return { command: override, args: [] };
  const pkg = findPackage('@anthropic-ai/claude-code');
  if (pkg) {
    const linked = join(pkg, 'bin', 'claude.exe');
    if (usable(linked)) return { command: linked, args: [] };
    const native = claudeNativeBinary(pkg);
    if (native) return { command: native, args: [] };
  }
  return { command: 'claude', args: [] };
}

/** The platform package's executable: beside the wrapper (pnpm) or in a parent node_modules (npm). */
export function claudeNativeBinary(wrapperDir: string): string | undefined {
  const name = `@anthropic-ai/claude-code-${platform}-${arch}${isMusl() ? '-musl' : ''}`;
  const file = platform === 'win32' ? 'claude.exe' : 'claude';
  for (const dir of [join(dirname(dirname(wrapperDir)), name), findPackage(name, wrapperDir), findPackage(name)]) {
    if (dir && usable(join(dir, file))) return join(dir, file);
  }
  return undefined;
}

export function piCommand(env: Record<string, string | undefined> = {}): Command {
  const override = env.SHROOMS_PI_BIN;
  if (override) return { command: override, args: [] };
  const bin = packageBin('@mariozechner/pi-coding-agent', 'pi');
  return bin ? { command: process.execPath, args: [bin] } : { command: 'pi', args: [] };
}

/** Gemini CLI is plain JavaScript: its `bundle/gemini.js`, run with this Node. */
export function geminiCommand(env: Record<string, string | undefined> = {}): Command {
  const override = env.SHROOMS_GEMINI_BIN;
  if (override) return { command: override, args: [] };
  const bin = packageBin('@google/gemini-cli', 'gemini');
  return bin ? { command: process.execPath, args: [bin] } : { command: 'gemini', args: [] };
}

/**
 * OpenCode ships a native executable per platform (`opencode-linux-x64`, `-baseline` for CPUs
 * without AVX2, `-musl`); its postinstall links the right one over the wrapper's `bin/opencode.exe`.
 * Without that, the platform package's own `bin/opencode` is used.
 */
export function opencodeCommand(env: Record<string, string | undefined> = {}): Command {
  const override = env.SHROOMS_OPENCODE_BIN;
  if (override) return { command: override, args: [] };
  const pkg = findPackage('opencode-ai');
  if (pkg) {
    const linked = join(pkg, 'bin', 'opencode.exe');
    if (usable(linked)) return { command: linked, args: [] };
    const os = platform === 'win32' ? 'windows' : platform;
    for (const variant of ['', '-baseline', ...(isMusl() ? ['-musl', '-baseline-musl'] : [])]) {
      const dir = findPackage(`opencode-${os}-${arch}${variant}`, pkg) ?? findPackage(`opencode-${os}-${arch}${variant}`);
      const file = dir && join(dir, 'bin', platform === 'win32' ? 'opencode.exe' : 'opencode');
      if (file && usable(file)) return { command: file, args: [] };
    }
  }
  return { command: 'opencode', args: [] };
}

/** Codex's ACP adapter: a native executable in a per-platform optional dependency. */
export function codexAcpCommand(env: Record<string, string | undefined> = {}): Command {
  const override = env.SHROOMS_CODEX_ACP_BIN;
  if (override) return { command: override, args: [] };
  const pkg = findPackage('@zed-industries/codex-acp');
  const name = `@zed-industries/codex-acp-${platform}-${arch}`;
  const dir = pkg ? (findPackage(name, pkg) ?? findPackage(name)) : undefined;
  const file = dir && join(dir, 'bin', platform === 'win32' ? 'codex-acp.exe' : 'codex-acp');
  return file && usable(file) ? { command: file, args: [] } : { command: 'codex-acp', args: [] };
}

/** The file of a package's `bin` entry, if the package is installed. */
function packageBin(name: string, binName: string): string | undefined {
  const pkg = findPackage(name);
  if (!pkg) return undefined;
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[binName];
  return bin && existsSync(join(pkg, bin)) ? join(pkg, bin) : undefined;
}
