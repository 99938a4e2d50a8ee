/**
 * The command's settings from the environment, read here only and parsed once: what the commands
 * take besides their flags. The services a command starts (gateway, bridge, …) parse their own
 * config from the environment they are given, `shellEnv()` plus what the command sets.
 */
import { z } from 'zod';

const opt = z.string().optional();

export const CliEnvSchema = z.object({
  /** Who asks (a2a, config): `SESSION` or `MACHINE/SESSION`. */
  SHROOMS_AGENT_SESSION: opt,
  /** up: this machine's name (default: the host name). */
  SHROOMS_MACHINE: opt,
  /** up: the state folder (NATS data, credentials, logs; default `.state/` in the repository). */
  SHROOMS_STATE_DIR: opt,
  /** up: an operator's NATS server; up then starts none of its own and makes no users. */
  NATS_URL: opt,
  /** mesh units: the nats-server executable (default: Debian's /usr/sbin or another usual place). */
  NATS_SERVER_BIN: opt,
  /** up: the gateway's port (`--port`). */
  GATEWAY_PORT: z.string().default('7387'),
  /** up: NATS's client port (`--nats-port`; -1 = any free port). */
  SHROOMS_NATS_PORT: z.string().default('-1'),
  /** up: the gateway's guard setting unless `--no-guard`, by the gateway's rule (default `local`: no guard process; `service`: one). */
  GATEWAY_GUARD: opt,
  /** up: the session the machine card leads to (default: `--session`). */
  GATEWAY_DEFAULT_SESSION: opt,
  /** mesh: this machine's config folder (`--dir`). */
  SHROOMS_CONFIG_DIR: z.string().default('/etc/shrooms'),
  /** logs: the base of bridges' state folders (default ~/.local/state). */
  XDG_STATE_HOME: opt,
  /** up: where to look for nats-server. */
  PATH: z.string().default(''),
  /** How the person typed the command (`./shrooms` sets it): usage lines and errors name it. */
  SHROOMS_CLI_NAME: z.string().min(1).default('shrooms-agent'),
});
export type CliEnv = z.infer<typeof CliEnvSchema>;

let parsed: Readonly<CliEnv> | undefined;

/** The settings, parsed on first use (a process runs one command). */
export function cliEnv(): Readonly<CliEnv> {
  return (parsed ??= Object.freeze(CliEnvSchema.parse(process.env)));
}

/**
 * How the person typed the command, taken out of the environment: the processes a command starts
 * (a bridge's sessions, whose own shrooms-agent is on their PATH) must not inherit it.
 */
export function takeCliName(): string {
  const name = cliEnv().SHROOMS_CLI_NAME;
  delete process.env.SHROOMS_CLI_NAME;
  return name;
}

/** The environment as given: what a command passes on to the services it starts and to client options. */
export function shellEnv(): Record<string, string | undefined> {
  return process.env;
}
