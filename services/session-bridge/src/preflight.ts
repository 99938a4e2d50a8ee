/**
 * What a bridge checks before and beside its start, so a person sees what is wrong within seconds
 * and what to do: the harness CLI is there (else the bridge stops at once), and the gateway the
 * session's tools call answers (else one line now, and another when it does).
 */
import { accessSync, constants } from 'node:fs';
import { request } from 'node:http';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Logger } from '@shrooms/runtime';
import { claudeCommand, codexAcpCommand, geminiCommand, opencodeCommand, piCommand, type Command } from './harness/binaries.js';
import { splitCommandLine } from './harness/acp-agents.js';
import type { HarnessKind } from './harness/types.js';

/** Where the harness's executable comes from and how a person points elsewhere. */
function harnessCommand(
  kind: HarnessKind,
  acp: { agent?: string; agentCommand?: string },
  env: Record<string, string | undefined>,
): { cmd: Command; what: string; fix: string } | undefined {
  const installed = 'run `pnpm install` in the repository (it installs the pinned version)';
  if (kind === 'claude')
    return { cmd: claudeCommand(env), what: 'Claude Code (`claude`)', fix: `${installed}, or set SHROOMS_CLAUDE_BIN to its path` };
  if (kind === 'pi') return { cmd: piCommand(env), what: 'pi', fix: `${installed}, or set SHROOMS_PI_BIN to its path` };
  if (kind !== 'acp') return undefined;
  if (acp.agentCommand) {
    const [command] = splitCommandLine(acp.agentCommand);
    return command
      ? { cmd: { command, args: [] }, what: `the ACP agent \`${command}\``, fix: 'install it or give its full path in --agent-command' }
      : undefined;
  }
  if (acp.agent === 'gemini') return { cmd: geminiCommand(env), what: 'Gemini CLI', fix: `${installed}, or set SHROOMS_GEMINI_BIN` };
  if (acp.agent === 'opencode') return { cmd: opencodeCommand(env), what: 'OpenCode', fix: `${installed}, or set SHROOMS_OPENCODE_BIN` };
  if (acp.agent === 'codex') return { cmd: codexAcpCommand(env), what: 'codex-acp', fix: `${installed}, or set SHROOMS_CODEX_ACP_BIN` };
  return undefined;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A command name as the harness will run it: a path, or a name looked up on PATH. */
export function findExecutable(command: string, path: string): string | undefined {
  if (command.includes('/')) return executable(command) ? command : undefined;
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const file = join(dir, command);
    if (executable(file)) return file;
  }
  return undefined;
}

/** Throws, saying what to do, when the harness's CLI cannot be run (`env`: the harness's, with PATH). */
export function checkHarnessBinary(
  kind: HarnessKind,
  acp: { agent?: string; agentCommand?: string },
  env: Record<string, string | undefined>,
): void {
  const h = harnessCommand(kind, acp, env);
  if (!h || findExecutable(h.cmd.command, env.PATH ?? '')) return;
  const where = isAbsolute(h.cmd.command) ? h.cmd.command : `\`${h.cmd.command}\` on PATH`;
  throw new Error(`cannot start the ${kind} harness: ${h.what} is not there (looked for ${where}): ${h.fix}`);
}

/** Interval of the gateway check while it does not answer, ms. */
export const GATEWAY_RECHECK_MS = 30_000;
/** How long one gateway check waits for its answer, ms. */
const GATEWAY_CHECK_TIMEOUT_MS = 3_000;

/**
 * GET `url` once: undefined when it answers 2xx, else why not. Plain `node:http` (`node:https` only
 * for an https URL), not `fetch`: the first fetch loads undici and compiles its WebAssembly HTTP
 * parser, which left an idle bridge ~20 MB larger for this one request.
 */
export async function healthCheck(url: string, timeoutMs = GATEWAY_CHECK_TIMEOUT_MS): Promise<string | undefined> {
  const get = url.startsWith('https:') ? (await import('node:https')).request : request;
  return new Promise((resolve) => {
    const req = get(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
      resolve(ok ? undefined : `HTTP ${res.statusCode}`);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'connection refused' : err.message));
    req.end();
  });
}

/**
 * Asks the gateway's `/healthz` now and, while it does not answer, every 30 s; logs once when it
 * does not and once when it does again. Returns the stop.
 */
export function watchGateway(url: string, log: Logger, recheckMs = GATEWAY_RECHECK_MS): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let down = false;
  const check = async () => {
    const why = await healthCheck(`${url.replace(/\/+$/, '')}/healthz`).catch((err: Error) => err.message);
    if (stopped) return;
    if (why && !down)
      log.warn(
        { gatewayUrl: url, why },
        `the gateway at ${url} does not answer (${why}): this session's tools (ask_agent, list_agents, task_status…) need it. Start it (\`shrooms-agent up\` or \`shrooms-agent gateway\`) or set SHROOMS_GATEWAY_URL`,
      );
    if (!why && down) log.info({ gatewayUrl: url }, `the gateway at ${url} answers`);
    down = !!why;
    if (down) timer = setTimeout(() => void check(), recheckMs);
  };
  void check();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
