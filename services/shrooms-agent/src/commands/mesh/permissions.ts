import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The generator in a clone, or the copy an installed package carries (its prepack puts it in dist/deploy). */
function generator(): URL {
  const inClone = new URL('../../../../../deploy/nats/gen-permissions.mjs', import.meta.url);
  return existsSync(fileURLToPath(inClone)) ? inClone : new URL('../../deploy/gen-permissions.mjs', import.meta.url);
}

interface Generator {
  renderPermissions(o: { local: string; sessions?: string[]; admin?: boolean; command: string }): string;
  sessionUser(agent: string, o: { local: boolean }): { user: string; password: string };
}

const load = async () => (await import(String(generator()))) as Generator;

/** One session's NATS login on this machine: its user (`session-S`) and the variable of its password. */
export interface SessionLogin {
  session: string;
  user: string;
  /** The name of the password's variable in secrets.env (`NATS_SESSION_<S>_PASSWORD`). */
  password: string;
}

/**
 * permissions.conf of one machine from the one generator of NATS users and permissions,
 * deploy/nats/gen-permissions.mjs (consumed, not copied: its rules are the deployment's rules).
 * Each session of the machine gets its own user, `session-S` (`--session M/S`): its bridge reaches
 * that session's keys, deliveries and replies alone. The machine-wide `bridge` stays for a bridge
 * started by hand before its session is named.
 */
export async function permissionsFor(
  machine: string,
  dir: string,
  sessions: string[] = [],
): Promise<{ permissions: string; logins: SessionLogin[] }> {
  const gen = await load();
  const agents = sessions.map((s) => `${machine}/${s}`);
  const command = [`--local ${machine}`, ...agents.map((a) => `--session ${a}`), `--out ${join(dir, 'permissions.conf')}`].join(' ');
  return {
    permissions: gen.renderPermissions({ local: machine, sessions: agents, command }),
    logins: sessions.map((session) => ({ session, ...gen.sessionUser(`${machine}/${session}`, { local: true }) })),
  };
}
