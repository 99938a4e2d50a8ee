/**
 * Images for the private engine, made here because no registry may be reachable:
 *
 *   base   Debian (debootstrap, minbase) with Node and npm from the npm registry's node-linux-*
 *          and npm packages and a `node` user (uid 1000) — the shape of `node:22-bookworm-slim`,
 *          which deploy/Dockerfile takes as NODE_IMAGE. Built once per machine into a cached
 *          root filesystem tarball (dockerCacheDir()); each engine imports it (seconds).
 *   nats   that base plus Debian's nats-server (the one the tests run) and an entrypoint that,
 *          like the official image's, puts `nats-server` before arguments that begin with `-`.
 */
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { natsServerBinary } from '../nats-server.js';
import type { DockerEngine } from './engine.js';
import { run } from './exec.js';
import { unmountUnder } from './engine.js';

export const BASE_DEBIAN_SUITE = 'bookworm';
/** Node of the image base: the Dockerfile's default line (22), exact. */
export const BASE_NODE_VERSION = '22.23.5';
/** The npm that Node line ships. */
export const BASE_NPM_VERSION = '10.9.8';
/** Bump when the recipe below changes, so cached tarballs of the old recipe are not used. */
const RECIPE = 1;

/** `$SHROOMS_DOCKER_CACHE`, else `${XDG_CACHE_HOME:-$HOME/.cache}/shrooms/docker`. */
export function dockerCacheDir(): string {
  if (process.env.SHROOMS_DOCKER_CACHE) return process.env.SHROOMS_DOCKER_CACHE;
  const xdg = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(xdg, 'shrooms', 'docker');
}

export function baseImageTag(): string {
  return `shd-node:${BASE_NODE_VERSION}-${BASE_DEBIAN_SUITE}`;
}

function baseTarballName(): string {
  return `base-${BASE_DEBIAN_SUITE}-node${BASE_NODE_VERSION}-npm${BASE_NPM_VERSION}-${process.arch}-r${RECIPE}.tar`;
}

export interface BaseOptions {
  cacheDir?: string;
  /** Default http://deb.debian.org/debian (or $DEBIAN_MIRROR). */
  mirror?: string;
  log?: (line: string) => void;
}

/** The cached base root filesystem tarball, built first when missing (about a minute). */
export async function ensureBaseTarball(opts: BaseOptions = {}): Promise<{ path: string; built: boolean }> {
  const cacheDir = opts.cacheDir ?? dockerCacheDir();
  const path = join(cacheDir, baseTarballName());
  if (existsSync(path)) return { path, built: false };
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const nodeArch = { x64: 'x64', arm64: 'arm64' }[process.arch as string];
  if (!nodeArch) throw new Error(`no node-linux package for ${process.arch}`);
  if (!existsSync('/usr/sbin/debootstrap')) throw new Error('debootstrap missing (apt-get install -y debootstrap)');
  await mkdir(cacheDir, { recursive: true });
  // Old recipes and versions: one base per machine is enough.
  for (const f of await readdir(cacheDir))
    if (/^base-.*\.tar$/.test(f) && f !== baseTarballName()) await rm(join(cacheDir, f), { force: true });
  const work = await mkdtemp(join(cacheDir, 'shd-base-'));
  const rootfs = join(work, 'rootfs');
  try {
    log(`docker: building the base image once for this machine (debootstrap ${BASE_DEBIAN_SUITE}, Node ${BASE_NODE_VERSION}) into ${path}`);
    const mirror = opts.mirror ?? process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
    // wget: the compose file's NATS health check (the official image has busybox's).
    await run('/usr/sbin/debootstrap', ['--variant=minbase', '--include=ca-certificates,wget', BASE_DEBIAN_SUITE, rootfs, mirror], {
      timeoutMs: 900_000,
    });
    await run(
      'npm',
      ['pack', '--silent', `node-linux-${nodeArch}@${BASE_NODE_VERSION}`, `npm@${BASE_NPM_VERSION}`, '--pack-destination', work],
      {
        timeoutMs: 300_000,
      },
    );
    const local = join(rootfs, 'usr', 'local');
    await run('tar', [
      '-xzf',
      join(work, `node-linux-${nodeArch}-${BASE_NODE_VERSION}.tgz`),
      '-C',
      local,
      '--strip-components=1',
      'package/bin/node',
    ]);
    const npmDir = join(local, 'lib', 'node_modules', 'npm');
    await mkdir(npmDir, { recursive: true });
    await run('tar', ['-xzf', join(work, `npm-${BASE_NPM_VERSION}.tgz`), '-C', npmDir, '--strip-components=1']);
    await run('ln', ['-sf', '../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin', 'npm')]);
    await run('ln', ['-sf', '../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin', 'npx')]);
    await run('chroot', [rootfs, 'groupadd', '--gid', '1000', 'node']);
    await run('chroot', [rootfs, 'useradd', '--uid', '1000', '--gid', 'node', '--shell', '/bin/bash', '--create-home', 'node']);
    await run('chroot', [rootfs, '/usr/local/bin/node', '--version']);
    await run('sh', ['-c', 'rm -rf var/lib/apt/lists/* var/cache/apt/archives/*.deb var/log/*.log tmp/*'], { cwd: rootfs });
    await run('tar', ['--numeric-owner', '-C', rootfs, '-cf', join(work, 'base.tar'), '.']);
    await rename(join(work, 'base.tar'), path);
    return { path, built: true };
  } finally {
    await unmountUnder(work);
    await rm(work, { recursive: true, force: true });
  }
}

/** The system's CA bundle: the base trusts what this machine trusts (e.g. a TLS-inspecting proxy). */
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * Imports the cached base into the engine, then adds a layer with this machine's CA bundle (Node
 * reads it through NODE_EXTRA_CA_CERTS): builds from it reach the registries this machine reaches.
 * Tagged baseImageTag().
 */
export async function importBaseImage(engine: DockerEngine, opts: BaseOptions = {}): Promise<{ tag: string; built: boolean }> {
  const { path, built } = await ensureBaseTarball(opts);
  const raw = `${baseImageTag()}-raw`;
  await engine.docker([
    'import',
    '--change',
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '--change',
    `ENV NODE_VERSION=${BASE_NODE_VERSION}`,
    '--change',
    'CMD ["node"]',
    path,
    raw,
  ]);
  const ctx = await mkdtemp(join(engine.dir, 'base-image-'));
  try {
    const lines = [`FROM ${raw}`];
    if (existsSync(HOST_CA_BUNDLE)) {
      await copyFile(HOST_CA_BUNDLE, join(ctx, 'ca-certificates.crt'));
      lines.push(`COPY ca-certificates.crt ${HOST_CA_BUNDLE}`, `ENV NODE_EXTRA_CA_CERTS=${HOST_CA_BUNDLE}`);
    }
    await writeFile(join(ctx, 'Dockerfile'), `${lines.join('\n')}\n`);
    await engine.docker(['build', '-q', '-t', baseImageTag(), ctx], { env: engine.env() });
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
  return { tag: baseImageTag(), built };
}

const NATS_ENTRYPOINT = `#!/bin/sh
# Like the official image's: options alone run nats-server with them.
set -e
case "\${1:-}" in -*|'') set -- nats-server "$@" ;; esac
exec "$@"
`;

/** Builds the NATS image from the base and this machine's (Debian's) nats-server; returns its tag. */
export async function buildNatsImage(engine: DockerEngine, baseTag: string): Promise<string> {
  const bin = natsServerBinary();
  const version = /v?(\d+\.\d+\.\d+)/.exec(await run(bin, ['--version']))?.[1] ?? 'local';
  const tag = `shd-nats:${version}`;
  const ctx = await mkdtemp(join(engine.dir, 'nats-image-'));
  try {
    await copyFile(bin, join(ctx, 'nats-server'));
    await chmod(join(ctx, 'nats-server'), 0o755);
    await writeFile(join(ctx, 'nats-entrypoint'), NATS_ENTRYPOINT, { mode: 0o755 });
    await writeFile(
      join(ctx, 'Dockerfile'),
      [
        `FROM ${baseTag}`,
        'COPY nats-server /usr/sbin/nats-server',
        'COPY nats-entrypoint /usr/local/bin/nats-entrypoint',
        'EXPOSE 4222 6222 8222',
        'ENTRYPOINT ["nats-entrypoint"]',
        'CMD ["nats-server", "-js"]',
        '',
      ].join('\n'),
    );
    await engine.docker(['build', '-q', '-t', tag, ctx], { env: engine.env() });
    return tag;
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
}
