/**
 * The image built from deploy/Dockerfile (by the setup, as users build it): it runs as the
 * non-root user node with its code read-only to that user, its CLI answers, and its node_modules —
 * listed inside the image — hold nothing but the CLI's production dependencies: no test helper, no
 * dev dependency.
 */
import { DOCKER_BIN, REPO_ROOT, run } from '@shrooms/testing';
import { describe, expect, inject, it } from 'vitest';

const docker = inject('docker');

interface Tree {
  version?: string;
  dependencies?: Record<string, Tree>;
}

describe.skipIf(!docker)('the image built from deploy/Dockerfile', () => {
  const cli = (args: string[]) => run(DOCKER_BIN, ['-H', docker!.host, ...args], { timeoutMs: 120_000 });
  const sh = (script: string) => cli(['run', '--rm', '--network', 'none', '--entrypoint', 'sh', docker!.image, '-c', script]);

  it('runs as the non-root user node, its code not writable by it', async () => {
    expect((await cli(['image', 'inspect', '--format', '{{.Config.User}}', docker!.image])).trim()).toBe('node');
    expect((await sh('id -u; id -un')).trim().split('\n')).toEqual(['1000', 'node']);
    expect((await sh('touch /app/dist/x 2>/dev/null && echo writable || echo read-only')).trim()).toBe('read-only');
    expect((await sh('touch /data/x && echo writable')).trim()).toBe('writable');
  });

  it('answers with the CLI as its entrypoint, on Node 20.19 or newer, and says that up is not in it', async () => {
    expect(await cli(['run', '--rm', '--network', 'none', docker!.image, '--help'])).toMatch(/^usage: shrooms-agent/);
    // `up` needs the test helpers' local NATS and processes: a checkout's command, not the image's.
    await expect(cli(['run', '--rm', '--network', 'none', docker!.image, 'up'])).rejects.toThrow(/up runs from a checkout/);
    const [major, minor] = (await sh('node -p process.versions.node')).trim().split('.').map(Number);
    expect(major! > 20 || (major === 20 && minor! >= 19)).toBe(true);
  });

  it('holds no test helper or dev dependency in its node_modules', async () => {
    // Every package of the image: pnpm's store folder names them (name@version[_peers]), and the
    // workspace packages are links under @shrooms.
    const listing = await sh('ls /app/node_modules/.pnpm; ls -d /app/node_modules/@shrooms/*');
    const packages = new Set(
      listing
        .split('\n')
        .map((l) => l.trim())
        .flatMap((l) => {
          const linked = /^\/app\/node_modules\/(@shrooms\/[^/]+)$/.exec(l);
          if (linked) return [linked[1]!];
          const stored = /^(@?[^@]+)@/.exec(l);
          return stored ? [stored[1]!.replace('+', '/')] : [];
        }),
    );
    expect(packages.has('@shrooms/shrooms-agent') || packages.has('@shrooms/gateway')).toBe(true);
    // The CLI's production closure as pnpm resolves it from the lockfile: the image may hold
    // nothing else, and never a test helper.
    const listed = JSON.parse(
      await run('pnpm', ['--filter', '@shrooms/shrooms-agent', 'list', '--prod', '--depth', 'Infinity', '--json'], { cwd: REPO_ROOT }),
    ) as Tree[];
    const production = new Set<string>(['@shrooms/shrooms-agent']);
    const seen = new Set<string>();
    const walk = (deps: Tree['dependencies']) => {
      for (const [name, dep] of Object.entries(deps ?? {}))
        if (!seen.has(`${name}@${dep.version}`)) {
          seen.add(`${name}@${dep.version}`);
          production.add(name);
          walk(dep.dependencies);
        }
    };
    listed.forEach((p) => walk(p.dependencies));
    const testOnly = ['@shrooms/testing', '@shrooms/tests', '@shrooms/bench', 'testcontainers', '@testcontainers/nats', 'vitest'];
    const found = [...packages].filter((p) => testOnly.includes(p) || !production.has(p));
    expect(found).toEqual([]);
  });
});
