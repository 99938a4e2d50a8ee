/**
 * NATS users for a server of one machine — `up`'s, and the tests' that run the mesh as deployed
 * (docs/security.md): each part gets its own user with the deployment's least-privilege
 * permissions, from the one generator (deploy/nats/gen-permissions.mjs): gateway, guard, scheduler,
 * the machine's bridges (`bridge`), each named session's bridge alone (`session-SESSION`)
 * and `admin` for operators. Passwords are new
 * on every start (192 random bits); they live only in files of mode 0600 in a state folder of mode
 * 0700, and in the environment of the processes that need them — never on a command line or in a log.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export type Role = 'gateway' | 'guard' | 'scheduler' | 'bridge' | 'admin';

export interface LocalNats {
  /** nats-server's config file (includes the permissions). */
  confFile: string;
  /** The variables the permissions reference (`$NATS_…_PASSWORD`), for nats-server's environment. */
  serverEnv: Record<string, string>;
  /** NATS_USER and NATS_PASS for each part. */
  login(role: Role): { NATS_USER: string; NATS_PASS: string };
  /** The login of one named session's bridge alone. */
  sessionLogin(session: string): { NATS_USER: string; NATS_PASS: string };
  /**
   * The login of session `session`'s bridge alone, made now when the session had none: the
   * permissions file is written again with it (reload the server to let it in). What a bridge
   * started by hand next to `up` gets — never the machine-wide `bridge` user.
   */
  addSession(session: string): Promise<{ NATS_USER: string; NATS_PASS: string; added: boolean }>;
  /** The operators' login (`set -a; . FILE`), for the nats CLI. */
  adminEnvFile: string;
}

interface GeneratedUser {
  user: string;
  password: string;
}

interface Generator {
  serviceUsers(): GeneratedUser[];
  bridgeUser(machine: string, o: { local: boolean }): GeneratedUser;
  sessionUser(agent: string, o: { local: boolean }): GeneratedUser;
  adminUser(): GeneratedUser;
  renderPermissions(o: { local: string; sessions: string[]; admin: boolean; command: string }): string;
}

/** `pw` and 48 hex digits: a plain string to nats-server's variable substitution (make-password.sh). */
const password = () => `pw${randomBytes(24).toString('hex')}`;

/** Makes `dir` (and parents) and gives it mode 0700, also when it existed with a looser one. */
export async function privateDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  return dir;
}

/** Writes a file only its owner may read (0600), also over an existing one. */
export async function privateFile(file: string, text: string): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600);
}

/**
 * Writes the config and credentials under `stateDir/nats-auth` (0700; files 0600). With
 * `jetStreamDir` the config turns JetStream on with that store (start the server with
 * `jetStreamInConfig`), so that a reload for `addSession` keeps it.
 */
export async function prepareLocalNats(
  stateDir: string,
  machine: string,
  sessions: string[] = [],
  o: { jetStreamDir?: string } = {},
): Promise<LocalNats> {
  const gen = (await import(String(new URL('../../../deploy/nats/gen-permissions.mjs', import.meta.url)))) as Generator;
  const dir = await privateDir(join(stateDir, 'nats-auth'));
  const agents = sessions.map((s) => `${machine}/${s}`);
  const users: Record<Role, GeneratedUser> = {
    ...(Object.fromEntries(gen.serviceUsers().map((u) => [u.user, u])) as Record<'gateway' | 'guard' | 'scheduler', GeneratedUser>),
    bridge: gen.bridgeUser(machine, { local: true }),
    admin: gen.adminUser(),
  };
  const perSession = new Map(sessions.map((s, i) => [s, gen.sessionUser(agents[i]!, { local: true })]));
  const secrets = Object.fromEntries([...Object.values(users), ...perSession.values()].map((u) => [u.password, password()]));
  // Sessions added while the server runs: its environment is fixed, so their passwords are
  // variables defined in the permissions file itself (nats-server does not carry a variable of one
  // file into the files it includes; the file is 0600 like the env files).
  const added = new Map<string, string>();
  const writePermissions = async () => {
    const all = [...perSession.keys()].map((s) => `${machine}/${s}`);
    const command = [`--local ${machine}`, ...all.map((a) => `--session ${a}`)].join(' ');
    const vars = [...added].map(([name, value]) => `${name}: ${JSON.stringify(value)}\n`).join('');
    await privateFile(join(dir, 'permissions.conf'), vars + gen.renderPermissions({ local: machine, sessions: all, admin: true, command }));
  };
  await writePermissions();
  const confFile = join(dir, 'nats.conf');
  const jetstream = o.jetStreamDir ? `jetstream { store_dir: ${JSON.stringify(o.jetStreamDir)} }\n` : '';
  await privateFile(confFile, `${jetstream}include "permissions.conf"\n`);
  const of = (u: GeneratedUser) => ({ NATS_USER: u.user, NATS_PASS: secrets[u.password]! });
  const login = (role: Role) => of(users[role]);
  const sessionLogin = (session: string) => {
    const u = perSession.get(session);
    if (!u) throw new Error(`no NATS user for session ${session}: name it when preparing`);
    return of(u);
  };
  const addSession = async (session: string) => {
    if (perSession.has(session)) return { ...sessionLogin(session), added: false };
    const u = gen.sessionUser(`${machine}/${session}`, { local: true });
    perSession.set(session, u);
    added.set(u.password, password());
    secrets[u.password] = added.get(u.password)!;
    await writePermissions();
    return { ...sessionLogin(session), added: true };
  };
  const envFile = async (name: string, role: Role) => {
    const file = join(dir, `${name}.env`);
    const l = login(role);
    await privateFile(file, `NATS_USER=${l.NATS_USER}\nNATS_PASS=${l.NATS_PASS}\n`);
    return file;
  };
  return {
    confFile,
    // A copy: the variables of sessions added later live in the permissions file, not here.
    serverEnv: { ...secrets },
    login,
    sessionLogin,
    addSession,
    adminEnvFile: await envFile('admin', 'admin'),
  };
}
