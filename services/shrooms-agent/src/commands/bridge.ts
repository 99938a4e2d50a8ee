import { NAME_RULE, isValidName } from '@shrooms/protocol';
import { joinLocalMesh } from './local-mesh.js';
import type { Command } from './types.js';
import { commandArgs } from './usage.js';
import { shellEnv } from '../config.js';

const HELP = `usage: shrooms-agent bridge --session NAME [--harness claude|pi|acp|echo|tck] [--cwd DIR] [--auto-approve] [--model ID] [--standby]
       shrooms-agent bridge --session NAME --harness acp (--agent gemini|opencode|codex | --agent-command "CMD ARGS…")

Runs the session-bridge next to one session: owns its harness process, its queue and watchdog,
its MCP tools; records every task change in the ledger. The acp harness drives any Agent Client
Protocol agent: a known one by name (--agent), or any other by its command line (--agent-command).
Next to \`shrooms-agent up\` it needs no connection settings: it reads up's local-mesh.json (in
SHROOMS_STATE_DIR, else the repository's .state/) and gets a NATS user for this session alone.
Elsewhere, or to override: NATS_URL, NATS_USER/NATS_PASS (or NATS_CREDS), SHROOMS_MACHINE,
SHROOMS_GATEWAY_URL. Other settings: BRIDGE_*, WATCHDOG_* (docs/operators.md).
A session has one bridge: beside another one this start is refused, or with --standby
(BRIDGE_STANDBY=1) it waits and takes the session over when that one stops.
`;

/**
 * Node's flags with `--import SPECIFIER` made absolute: the session's shell runs the CLI from the
 * session's folder, where a bare `tsx` (how development runs it) would not be found.
 */
export function absoluteImports(execArgv: string[]): string[] {
  const abs = (spec: string) => (/^[./]|^[a-z]+:/i.test(spec) ? spec : import.meta.resolve(spec));
  return execArgv.map((a, i) => {
    if (a.startsWith('--import=')) return `--import=${abs(a.slice('--import='.length))}`;
    return execArgv[i - 1] === '--import' ? abs(a) : a;
  });
}

export const bridgeCommand: Pick<Command, 'run'> = {
  async run(args) {
    const parsed = commandArgs('bridge', {
      args,
      options: {
        session: { type: 'string' },
        harness: { type: 'string' },
        cwd: { type: 'string' },
        'auto-approve': { type: 'boolean' },
        standby: { type: 'boolean' },
        model: { type: 'string' },
        agent: { type: 'string' },
        'agent-command': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (!parsed) return 1;
    const { values } = parsed;
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const env = { ...shellEnv() };
    if (values.session) env.BRIDGE_SESSION = values.session;
    if (values.harness) env.BRIDGE_HARNESS = values.harness;
    if (values.cwd) env.BRIDGE_CWD = values.cwd;
    if (values['auto-approve']) env.BRIDGE_AUTO_APPROVE = '1';
    if (values.standby) env.BRIDGE_STANDBY = '1';
    if (values.model) env.BRIDGE_MODEL = values.model;
    if (values.agent) env.BRIDGE_ACP_AGENT = values.agent;
    if (values['agent-command']) env.BRIDGE_ACP_COMMAND = values['agent-command'];
    if (!env.BRIDGE_SESSION) {
      process.stderr.write(`shrooms-agent bridge: --session is required\n\n${HELP}`);
      return 1;
    }
    // Refused here, before anything connects: a worker under a name the protocol refuses could
    // receive tasks but never name them to finish them.
    if (!isValidName(env.BRIDGE_SESSION)) {
      process.stderr.write(`shrooms-agent bridge: the session name ${JSON.stringify(env.BRIDGE_SESSION)} is not valid: use ${NAME_RULE}\n`);
      return 1;
    }
    let joined: string;
    try {
      joined = await joinLocalMesh(env, env.BRIDGE_SESSION);
    } catch (err) {
      process.stderr.write(`shrooms-agent bridge: ${(err as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`shrooms-agent bridge: ${joined}\n`);
    const { runBridge } = await import('@shrooms/session-bridge/run');
    // The session's shell runs this same CLI as `shrooms-agent` (on its PATH, see session-cli.ts).
    await runBridge(env, { cli: { command: process.execPath, args: [...absoluteImports(process.execArgv), process.argv[1]!] } });
    return -1;
  },
};
