/**
 * The command line inside a session: the note tells the model that `shrooms-agent a2a …` works in
 * its shell, so the session's process gets it on `PATH` — a small `shrooms-agent` script in the
 * bridge's state folder (`STATE/bin`) that runs the very CLI the bridge was started from (same
 * Node, same flags) — and the settings that CLI reads: this machine's gateway, the machine and the
 * session (who asks). That CLI reaches the mesh only through the gateway, over HTTP (schedules
 * too): the session gets none of the bridge's NATS login (`harnessBaseEnv` in config.ts).
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/** How to run `shrooms-agent`: the executable and the arguments before the CLI's own. */
export interface CliCommand {
  command: string;
  args: string[];
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Writes `stateDir/bin/shrooms-agent` and returns the environment a session needs to run it. */
export async function sessionCli(
  stateDir: string,
  cli: CliCommand,
  o: { machine: string; session: string; gatewayUrl: string; path?: string },
): Promise<Record<string, string>> {
  const bin = join(stateDir, 'bin');
  await mkdir(bin, { recursive: true });
  const file = join(bin, 'shrooms-agent');
  await writeFile(file, `#!/bin/sh\nexec ${[cli.command, ...cli.args].map(quote).join(' ')} "$@"\n`);
  await chmod(file, 0o755);
  return {
    PATH: o.path ? `${bin}${delimiter}${o.path}` : bin,
    SHROOMS_GATEWAY_URL: o.gatewayUrl,
    SHROOMS_MACHINE: o.machine,
    SHROOMS_AGENT_SESSION: `${o.machine}/${o.session}`,
  };
}
