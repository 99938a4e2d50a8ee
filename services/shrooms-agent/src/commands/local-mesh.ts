/**
 * How the commands find the mesh `up` runs on this machine, with no flags or variables.
 *
 * `up` writes `local-mesh.json` (mode 0600) in its state folder — `SHROOMS_STATE_DIR`, else
 * `.state/` in the repository — and removes it when it stops:
 *
 *   { machine, natsUrl, gatewayUrl, pid, sessionUsers?, operators? }
 *
 * `natsUrl` carries no credential. A bridge started by hand asks `up` for a NATS user of its own
 * session (`bridge-M-S`: only what a bridge of that session may do) over the Unix socket named by
 * `sessionUsers` — one JSON line `{"session":"S"}` in, one line `{"NATS_USER","NATS_PASS"}` or
 * `{"error"}` out. The socket lives in the state folder (0700), so only the account that runs `up`
 * reaches it. `operators` is the admin login file for the nats CLI.
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pidRuns } from '@shrooms/runtime';
import { z } from 'zod';

export const LOCAL_MESH_FILE = 'local-mesh.json';

export const LocalMeshSchema = z.object({
  machine: z.string(),
  natsUrl: z.string(),
  gatewayUrl: z.string(),
  /** `up`'s process: a file whose process is gone is stale. */
  pid: z.number().int(),
  /** The Unix socket that hands out per-session NATS users (absent when NATS is not `up`'s own). */
  sessionUsers: z.string().optional(),
  operators: z.string().optional(),
});
export type LocalMesh = z.infer<typeof LocalMeshSchema>;

/** The repository this CLI runs from (src/commands or dist/commands, three levels below it). */
const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** `up`'s state folder: SHROOMS_STATE_DIR, else `.state/` of the repository this CLI runs from. */
export function stateDirOf(env: Record<string, string | undefined>): string | undefined {
  if (env.SHROOMS_STATE_DIR) return resolve(env.SHROOMS_STATE_DIR);
  return existsSync(join(CHECKOUT, 'pnpm-workspace.yaml')) ? join(CHECKOUT, '.state') : undefined;
}

export type Found = { mesh: LocalMesh; file: string } | { mesh?: undefined; why: string };

/** The local mesh, if `up` runs; else why not (for the one line a command prints). */
export async function findLocalMesh(env: Record<string, string | undefined>): Promise<Found> {
  const dir = stateDirOf(env);
  if (!dir) return { why: 'no state folder (set SHROOMS_STATE_DIR to the one `shrooms-agent up` uses)' };
  const file = join(dir, LOCAL_MESH_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { why: `${file} is not there: \`shrooms-agent up\` is not running with this state folder` };
  }
  const parsed = LocalMeshSchema.safeParse(JSON.parse(text));
  if (!parsed.success) return { why: `${file} is not a local-mesh file of this version` };
  if (!pidRuns(parsed.data.pid)) return { why: `${file} is stale: the \`up\` that wrote it (pid ${parsed.data.pid}) is gone` };
  return { mesh: parsed.data, file };
}

const LoginSchema = z.union([z.object({ NATS_USER: z.string(), NATS_PASS: z.string() }), z.object({ error: z.string() })]);
export type SessionLogin = { NATS_USER: string; NATS_PASS: string };

/** Asks `up` for the NATS user of one session's bridge (made on first ask). */
export function askSessionUser(socket: string, session: string, timeoutMs = 15_000): Promise<SessionLogin> {
  return new Promise((done, fail) => {
    const conn = createConnection(socket);
    let buf = '';
    const timer = setTimeout(() => finish(new Error(`\`up\` did not answer on ${socket} within ${timeoutMs} ms`)), timeoutMs);
    const finish = (err?: Error, login?: SessionLogin) => {
      clearTimeout(timer);
      conn.destroy();
      if (err) fail(err);
      else done(login!);
    };
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${JSON.stringify({ session })}\n`));
    conn.on('error', (err) => finish(new Error(`cannot reach \`up\` on ${socket}: ${err.message}`)));
    conn.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      const r = LoginSchema.safeParse(JSON.parse(buf.slice(0, nl)));
      if (!r.success) finish(new Error(`\`up\` answered something else than a login on ${socket}`));
      else if ('error' in r.data) finish(new Error(r.data.error));
      else finish(undefined, r.data);
    });
  });
}

/** `up`'s side: answers each `{"session"}` line with `login(session)` or its error. */
export async function serveSessionUsers(socket: string, login: (session: string) => Promise<SessionLogin>): Promise<Server> {
  await rm(socket, { force: true });
  const server = createServer((conn) => {
    let buf = '';
    conn.setEncoding('utf8');
    conn.on('error', () => conn.destroy());
    conn.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) {
        if (buf.length > 4096) conn.destroy();
        return;
      }
      let session: string;
      try {
        session = z.object({ session: z.string() }).parse(JSON.parse(buf.slice(0, nl))).session;
      } catch {
        conn.end(`${JSON.stringify({ error: 'send one line {"session":"NAME"}' })}\n`);
        return;
      }
      login(session).then(
        (l) => conn.end(`${JSON.stringify(l)}\n`),
        (err: unknown) => conn.end(`${JSON.stringify({ error: (err as Error).message })}\n`),
      );
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(socket, () => ok());
  });
  return server;
}

/** Variables that already say where the mesh is: then the file is not read. */
const NATS_GIVEN = ['NATS_URL'] as const;
const GATEWAY_GIVEN = ['SHROOMS_GATEWAY_URL', 'GATEWAY_URL'] as const;

/**
 * A bridge's connection from the local mesh, unless NATS_URL says otherwise: the URL, the machine,
 * the gateway and a NATS user of this session alone. Returns the line to print about it.
 */
export async function joinLocalMesh(env: Record<string, string | undefined>, session: string): Promise<string> {
  if (NATS_GIVEN.some((k) => env[k])) return `NATS ${env.NATS_URL} (NATS_URL)`;
  const found = await findLocalMesh(env);
  if (!found.mesh) return `no local mesh (${found.why}) and NATS_URL is not set: trying nats://127.0.0.1:4222`;
  const { mesh, file } = found;
  env.NATS_URL = mesh.natsUrl;
  // The session user is of up's machine: a different SHROOMS_MACHINE could not use it.
  env.SHROOMS_MACHINE = mesh.machine;
  if (!GATEWAY_GIVEN.some((k) => env[k])) env.SHROOMS_GATEWAY_URL = mesh.gatewayUrl;
  let as = '';
  if (mesh.sessionUsers && !env.NATS_USER && !env.NATS_CREDS && !env.NATS_TOKEN) {
    const login = await askSessionUser(mesh.sessionUsers, session);
    Object.assign(env, login);
    as = ` as ${login.NATS_USER}`;
  }
  return `joining the local mesh of ${file}: ${mesh.machine}/${session}, NATS ${mesh.natsUrl}${as}, gateway ${env.SHROOMS_GATEWAY_URL}`;
}

/** The gateway and machine of the local mesh for the client commands (a2a, mcp, config), unless set. */
export async function clientDefaults(env: Record<string, string | undefined>): Promise<Record<string, string>> {
  if (GATEWAY_GIVEN.some((k) => env[k])) return {};
  const found = await findLocalMesh(env);
  if (!found.mesh) return {};
  return { SHROOMS_GATEWAY_URL: found.mesh.gatewayUrl, ...(env.SHROOMS_MACHINE ? {} : { SHROOMS_MACHINE: found.mesh.machine }) };
}
