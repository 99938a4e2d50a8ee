/**
 * `shrooms-agent config`: what to give Claude Code (`--mcp-config`, `--allowedTools`, the note) and
 * pi (our extension and its URL) so a session has the `shrooms` tools — the same setup the bridge
 * uses, for a person who starts a session by hand.
 */
import { hostname } from 'node:os';
import { selfCommand, sh } from './self.js';
import { cliEnv, shellEnv } from '../config.js';
import type { Command } from './types.js';
import { commandArgs } from './usage.js';

const HELP = `usage: shrooms-agent config [--session NAME] [--machine M] [--gateway URL]
                            [--mcp-url URL | --http-port PORT] [--note] [--json]

Prints how to give a Claude Code or pi session the "shrooms" MCP tools:
  Claude Code  claude --mcp-config '<json>' --strict-mcp-config --allowedTools <the read-only tools>
               (stdio: runs \`shrooms-agent mcp\` with the session's environment; or the HTTP form)
  pi           SHROOMS_MCP_URL=<url> pi -e <the shrooms-tools extension>
               (pi needs the HTTP form: \`shrooms-agent mcp --http PORT\`, or the bridge's)
and the environment and system-prompt note of the session.

  --session NAME   the session (default SHROOMS_AGENT_SESSION)
  --machine M      this machine (default SHROOMS_MACHINE, else the gateway's name)
  --gateway URL    this machine's gateway (default SHROOMS_GATEWAY_URL or http://127.0.0.1:7387)
  --mcp-url URL    the HTTP form's URL, when one runs;  --http-port PORT  the same on 127.0.0.1
  --note           print only the system-prompt note (for --append-system-prompt "$(…)")
  --json           everything as JSON
`;

export const configCommand: Pick<Command, 'run'> = {
  async run(args) {
    const parsed = commandArgs('config', {
      args,
      options: {
        session: { type: 'string' },
        machine: { type: 'string' },
        gateway: { type: 'string' },
        'mcp-url': { type: 'string' },
        'http-port': { type: 'string' },
        note: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (!parsed) return 1;
    const { values } = parsed;
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const { ShroomsClient, clientOptionsFromEnv, parseAgentName } = await import('@shrooms/client');
    const { sessionConfig, piExtensionFile, systemNote, MCP_URL_ENV } = await import('@shrooms/session-bridge');
    const rawSession = values.session ?? cliEnv().SHROOMS_AGENT_SESSION;
    if (!rawSession) {
      process.stderr.write('shrooms-agent config: say which session: --session NAME (or set SHROOMS_AGENT_SESSION)\n');
      return 1;
    }
    let agent;
    try {
      agent = parseAgentName(rawSession);
    } catch (err) {
      process.stderr.write(`shrooms-agent config: ${(err as Error).message}\n`);
      return 1;
    }
    const opts = clientOptionsFromEnv(shellEnv(), values.gateway ? { gatewayUrl: values.gateway } : {});
    const gatewayUrl = opts.gatewayUrl!;
    let machine = values.machine ?? agent.machine ?? opts.machine;
    let machineNote = '';
    if (!machine) {
      try {
        machine = await new ShroomsClient(opts).machine();
      } catch {
        machine = hostname().split('.')[0] || 'localhost';
        machineNote = ` (the gateway at ${gatewayUrl} did not answer; machine name from the hostname — set SHROOMS_MACHINE if it differs)`;
      }
    }
    let mcpUrl = values['mcp-url'];
    if (!mcpUrl && values['http-port'] !== undefined) {
      const port = Number(values['http-port']);
      if (!Number.isInteger(port) || port <= 0 || port > 65535) {
        process.stderr.write('shrooms-agent config: --http-port takes a port number\n');
        return 1;
      }
      mcpUrl = `http://127.0.0.1:${port}/mcp`;
    }
    const note = systemNote(machine, agent.session);
    if (values.note) {
      process.stdout.write(`${note}\n`);
      return 0;
    }
    const cfg = sessionConfig({
      machine,
      session: agent.session,
      gatewayUrl,
      mcpUrl,
      command: selfCommand(),
      piExtension: piExtensionFile(),
      systemNote: note,
    });
    if (values.json) {
      process.stdout.write(`${JSON.stringify(cfg, null, 2)}\n`);
      return 0;
    }
    const envLine = Object.entries(cfg.env)
      .map(([k, v]) => `${k}=${sh(v)}`)
      .join(' ');
    // The bridge's own arguments (the read-only tools run without asking; asking another agent or
    // scheduling asks), with the note given below as a command substitution instead of inline.
    const noteAt = cfg.claude.args.indexOf('--append-system-prompt');
    const claudeArgs = noteAt < 0 ? cfg.claude.args : cfg.claude.args.slice(0, noteAt);
    const piEnv = Object.entries(cfg.pi.env)
      .map(([k, v]) => `${k}=${sh(v)}`)
      .join(' ');
    const self = [selfCommand()].map((c) => [c.command, ...c.args].map(sh).join(' '))[0]!;
    const mcpHttp = `${self} mcp --http 7390`;
    process.stdout.write(
      [
        `Session ${machine}/${agent.session}${machineNote}, gateway ${gatewayUrl}`,
        '',
        'Environment of the session (the tools and `shrooms-agent a2a` read it):',
        `  ${envLine}`,
        '',
        `Claude Code (${mcpUrl ? 'the HTTP form' : 'stdio: Claude starts `shrooms-agent mcp` itself'}):`,
        `  ${envLine} claude ${claudeArgs.map(sh).join(' ')} \\`,
        `    --append-system-prompt "$(${self} config --session ${sh(`${machine}/${agent.session}`)} --note)"`,
        '  --mcp-config (as JSON):',
        ...JSON.stringify(cfg.claude.mcpConfig, null, 2)
          .split('\n')
          .map((l) => `    ${l}`),
        '',
        'pi (through our extension, which needs the HTTP form):',
        mcpUrl
          ? `  ${piEnv} pi ${cfg.pi.args.map(sh).join(' ')}`
          : `  start the HTTP form:  ${envLine} ${mcpHttp}\n  then:                ${envLine} ${MCP_URL_ENV}=http://127.0.0.1:7390/mcp pi ${cfg.pi.args.map(sh).join(' ')}`,
        '',
        'System-prompt note:',
        ...note.split('\n').map((l) => `  ${l}`),
        '',
      ].join('\n'),
    );
    return 0;
  },
};
