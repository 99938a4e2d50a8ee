/**
 * `shrooms-agent up`: the whole mesh on this machine — nats-server with JetStream (data in the
 * state folder), the gateway, the guard, the scheduler and an echo session named `demo` — each as
 * its own process, as they run in production. Prints where to point an A2A client; Ctrl-C stops all.
 * A part that exits unexpectedly is restarted with backoff, NATS first (see supervise.ts); each
 * exit and restart is printed and written to the state folder's logs/up.log (with up's start and stop).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, createWriteStream, existsSync, rmSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { GatewayGuardSchema, isValidName, NAME_RULE } from '@shrooms/protocol';
import type { Command } from './types.js';
import { commandArgs } from './usage.js';
import { cliEnv, shellEnv } from '../config.js';
import { LOCAL_MESH_FILE, serveSessionUsers, type LocalMesh } from './local-mesh.js';
import { holdStateDir } from './up-lock.js';
import { Supervisor, lastWords, type RunningPart } from './supervise.js';
import { upBanner } from './up-banner.js';
import type { Role } from '@shrooms/testing';

const HELP = `usage: shrooms-agent up [--port 7387] [--nats-port N] [--session demo] [--harness echo|tck] [--no-guard] [--no-scheduler]

Starts NATS (JetStream), the gateway (which admits new tasks itself), the scheduler and an echo
session on this machine; GATEWAY_GUARD=service runs a guard process for the gateway to ask instead,
--no-guard admits everything.
State (NATS data, logs, session state) goes to SHROOMS_STATE_DIR (default: .state/ in the
repository). A part that exits unexpectedly is restarted (backoff 0.5 s doubling to 30 s; NATS
first), and said so here and in logs/up.log. Ctrl-C stops everything.
`;

export const upCommand: Pick<Command, 'run'> = {
  async run(args) {
    const parsed = commandArgs('up', {
      args,
      options: {
        port: { type: 'string', default: cliEnv().GATEWAY_PORT },
        'nats-port': { type: 'string', default: cliEnv().SHROOMS_NATS_PORT },
        session: { type: 'string', default: 'demo' },
        // `tck` for the A2A TCK (README): the same honest no-model worker, by message-id prefix.
        harness: { type: 'string', default: 'echo' },
        'no-guard': { type: 'boolean' },
        'no-scheduler': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (!parsed) return 1;
    const { values } = parsed;
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    // The gateway's own rule for GATEWAY_GUARD (its default, its former name `required`), checked
    // before anything starts rather than by a gateway that then fails to.
    const guardSetting = GatewayGuardSchema.safeParse(values['no-guard'] ? 'off' : cliEnv().GATEWAY_GUARD);
    if (!guardSetting.success) {
      process.stderr.write(`GATEWAY_GUARD must be local, service or off (got ${JSON.stringify(cliEnv().GATEWAY_GUARD)})\n`);
      return 1;
    }
    // Loaded only here: every other command starts without the local-mesh helpers. They are a
    // development dependency, so the production image (pnpm deploy --prod) has no `up`.
    const helpers = await import('@shrooms/testing').catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ERR_MODULE_NOT_FOUND') throw err;
      process.stderr.write(
        'up runs from a checkout of the repository (pnpm install): its local NATS and processes come from the workspace.\n' +
          'This installation has only the services; run them one by one (deploy/compose does).\n',
      );
      return undefined;
    });
    if (!helpers) return 1;
    const { natsServerBinary, prepareLocalNats, privateDir, privateFile, REPO_ROOT, startNatsServer, wrap } = helpers;
    const bin = natsServerBinary();
    if (!cliEnv().NATS_URL && bin === 'nats-server' && !onPath('nats-server')) {
      process.stderr.write('nats-server is not installed. Install it with:  sudo apt-get install -y nats-server\n');
      return 1;
    }
    // The state folder holds NATS data, credentials and logs: only its owner may look inside.
    const stateDir = await privateDir(resolve(cliEnv().SHROOMS_STATE_DIR ?? join(REPO_ROOT, '.state')));
    try {
      holdStateDir(stateDir);
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      return 1;
    }
    const logDir = await privateDir(join(stateDir, 'logs'));
    const machine = cliEnv().SHROOMS_MACHINE ?? (hostname().split('.')[0] || 'localhost');
    // A server of our own runs with users and permissions; one given as NATS_URL is the operator's.
    const natsData = await privateDir(join(stateDir, 'nats'));
    const auth = cliEnv().NATS_URL ? undefined : await prepareLocalNats(stateDir, machine, [values.session!], { jetStreamDir: natsData });

    // up.log: when up started and stopped, and every exit and restart of a part between.
    const upLog = join(logDir, 'up.log');
    const record = (entry: Record<string, unknown>) =>
      appendFileSync(upLog, `${JSON.stringify({ time: new Date().toISOString(), service: 'up', ...entry })}\n`, { mode: 0o600 });
    const supervisor = new Supervisor({ print: (line) => process.stderr.write(`${line}\n`), log: record });
    let nats: Awaited<ReturnType<typeof startNatsServer>> | undefined;
    // NATS is the first part: started once, then restarted on the same ports and data.
    const natsPart = async (): Promise<RunningPart> => {
      if (!nats)
        nats = await startNatsServer({
          dataDir: natsData,
          // Its ports files in the state folder, not a temporary one left behind if `up` is killed.
          runDir: join(stateDir, 'nats-run'),
          port: Number(values['nats-port']),
          ...(auth ? { args: ['-c', auth.confFile], env: auth.serverEnv, jetStreamInConfig: true } : {}),
        });
      else await nats.restart();
      const handle = nats;
      return {
        pid: handle.pid,
        // A server we did not start (NATS_URL) is not ours to watch: it never "exits" here.
        exited: new Promise((resolve) => {
          const off = handle.onExit?.((exit) => {
            off?.();
            resolve(exit);
          });
        }),
        stop: () => handle.stop(),
      };
    };
    try {
      await supervisor.add({ name: 'nats', start: natsPart });
    } catch (err) {
      process.stderr.write(`nats-server did not start: ${(err as Error).message.split('\n')[0]}\n`);
      return 1;
    }
    const natsUrl = nats!.url;
    const gatewayUrl = `http://127.0.0.1:${values.port}`;
    const env: Record<string, string> = {
      ...(shellEnv() as Record<string, string>),
      NATS_URL: natsUrl,
      SHROOMS_MACHINE: machine,
      GATEWAY_PORT: String(values.port),
      SHROOMS_GATEWAY_URL: gatewayUrl,
      // up writes each part's output to logs/PART.log itself.
      BRIDGE_LOG_FILE: 'off',
      GATEWAY_GUARD: guardSetting.data,
      // The machine card (what the A2A TCK and generic clients read first) leads to the demo session.
      GATEWAY_DEFAULT_SESSION: cliEnv().GATEWAY_DEFAULT_SESSION ?? values.session!,
    };
    /** Parts being started, not yet ready: stopped at once when another does not start. */
    const starting = new Set<ReturnType<typeof wrap>>();
    /** One of our services as a supervised part: spawned again, the same way, on each restart. */
    const service = (name: string, cmd: string[], ready: RegExp, role: Role | { session: string }) => {
      const logFile = join(logDir, `${name}.log`);
      return supervisor.add({
        name,
        logFile,
        async start() {
          const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...cmd], {
            env: { ...env, ...(typeof role === 'string' ? auth?.login(role) : auth?.sessionLogin(role.session)) },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          const log = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
          child.stdout!.pipe(log);
          child.stderr!.pipe(log);
          // The end of what it printed, for the line that says why it did not start.
          let tail = '';
          const keep = (chunk: Buffer) => void (tail = (tail + chunk.toString('utf8')).slice(-8192));
          child.stdout!.on('data', keep);
          child.stderr!.on('data', keep);
          const proc = wrap(child);
          const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
            child.once('exit', (code, signal) => resolve({ code, signal })),
          );
          starting.add(proc);
          try {
            await proc.waitFor(ready, 60_000);
            // Started: its output is only its log's from here.
            child.stdout!.off('data', keep);
            child.stderr!.off('data', keep);
          } catch (err) {
            await proc.kill();
            const why = lastWords(tail) ?? (err as Error).message.split('\n')[0];
            throw new Error(`${name} did not start: ${why} (log: ${logFile})`, { cause: err });
          } finally {
            starting.delete(proc);
          }
          return { pid: child.pid, exited, stop: async () => void (await proc.stop()) };
        },
      });
    };
    const { COMMANDS } = await import('./index.js');
    const has = (name: string) => name in COMMANDS;
    const guardService = guardSetting.data === 'service';
    if (guardService && !has('guard')) env.GATEWAY_GUARD = 'off';
    try {
      const services = [service('gateway', ['gateway'], /gateway listening/, 'gateway')];
      // A gateway that admits in its own process (GATEWAY_GUARD=local, the default) needs no guard.
      if (guardService && has('guard')) services.push(service('guard', ['guard'], /guard ready/, 'guard'));
      if (!values['no-scheduler'] && has('scheduler')) services.push(service('scheduler', ['scheduler'], /scheduler ready/, 'scheduler'));
      services.push(
        service(
          `bridge-${values.session}`,
          ['bridge', '--harness', values.harness === 'tck' ? 'tck' : 'echo', '--session', values.session!, '--cwd', stateDir],
          /bridge ready/,
          { session: values.session! },
        ),
      );
      await Promise.all(services).catch(async (err: unknown) => {
        // The others still starting would wait out their own timeouts against a NATS being
        // stopped, and keep this process (and themselves) running meanwhile.
        await Promise.all([...starting].map((p) => p.stop()));
        await Promise.allSettled(services);
        throw err;
      });
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      await supervisor.stop();
      return 1;
    }
    // Where a bridge started by hand gets a NATS user of its own session, never a machine-wide one.
    const socket = join(stateDir, 'up.sock');
    const sessionUsers = auth
      ? await serveSessionUsers(socket, async (session) => {
          if (!isValidName(session)) throw new Error(`the session name ${JSON.stringify(session)} is not valid: use ${NAME_RULE}`);
          const { added, ...login } = await auth.addSession(session);
          if (added) {
            await nats!.reload!();
            process.stderr.write(`NATS user ${login.NATS_USER} made for a bridge of ${machine}/${session} started by hand\n`);
          }
          return login;
        }).then(
          async (server) => (await chmod(socket, 0o600), server),
          (err: unknown) => {
            process.stderr.write(
              `cannot serve session users on ${socket} (${(err as Error).message}): bridges started by hand need NATS_USER/NATS_PASS\n`,
            );
            return undefined;
          },
        )
      : undefined;
    const meshFile = join(stateDir, LOCAL_MESH_FILE);
    const details: LocalMesh = {
      machine,
      natsUrl,
      gatewayUrl,
      pid: process.pid,
      ...(sessionUsers ? { sessionUsers: socket } : {}),
      ...(auth ? { operators: auth.adminEnvFile } : {}),
    };
    await privateFile(meshFile, `${JSON.stringify(details, null, 2)}\n`);
    // Gone with us, also on a crash of this process (a stale file names a pid that is gone).
    const forget = () => rmSync(meshFile, { force: true });
    process.once('exit', forget);
    record({
      level: 'info',
      event: 'up',
      pid: process.pid,
      msg: `up on ${machine}: NATS ${natsUrl}, gateway ${gatewayUrl}, session ${machine}/${values.session}`,
    });
    process.stdout.write(
      upBanner({
        machine,
        natsUrl,
        monitorUrl: nats!.monitorUrl,
        gatewayUrl,
        session: values.session!,
        harness: values.harness === 'tck' ? 'tck' : 'echo',
        stateDir,
        meshFile,
        adminEnvFile: auth?.adminEnvFile,
      }),
    );
    await new Promise<void>((done) => {
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        process.stdout.write('\nstopping…\n');
        forget();
        sessionUsers?.close();
        void supervisor.stop().then(() => {
          record({ level: 'info', event: 'stopped', msg: 'up stopped every part' });
          done();
        });
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  },
};

function onPath(cmd: string): boolean {
  return cliEnv()
    .PATH.split(':')
    .some((d) => existsSync(join(d, cmd)));
}
