/**
 * The docker project's global setup: one private Docker engine for every file of the project, the
 * base image (cached per machine), the NATS image and the project's image built from
 * deploy/Dockerfile as users build it (NODE_IMAGE set to the base). The engine and everything in it
 * go at teardown, also when a test failed.
 *
 * Where no engine can start (not root, not Linux, no dockerd), the files skip, and this prints one
 * line saying so and why.
 */
import { performance } from 'node:perf_hooks';
import {
  buildNatsImage,
  dockerCacheDir,
  dockerEngineUnavailable,
  importBaseImage,
  REPO_ROOT,
  startDockerEngine,
  type DockerEngine,
} from '@shrooms/testing';
import type { TestProject } from 'vitest/node';

export interface DockerContext {
  host: string;
  env: Record<string, string>;
  dir: string;
  storageDriver: string;
  baseImage: string;
  natsImage: string;
  image: string;
  /** Seconds each step took, for the report (cold: the base was built in this run). */
  timings: Record<string, number>;
  baseBuilt: boolean;
}

declare module 'vitest' {
  export interface ProvidedContext {
    docker: DockerContext | null;
    dockerSkipReason: string;
  }
}

export const IMAGE = 'shrooms-agent:dev';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const why = dockerEngineUnavailable();
  if (why) {
    process.stdout.write(`\ndocker: SKIPPED — no Docker engine can start here: ${why}\n\n`);
    project.provide('docker', null);
    project.provide('dockerSkipReason', why);
    return async () => {};
  }
  const timings: Record<string, number> = {};
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const r = await fn();
    timings[name] = Math.round((performance.now() - t) / 100) / 10;
    return r;
  };
  let engine: DockerEngine | undefined;
  try {
    engine = await step('engine', () => startDockerEngine({ prefix: 'shd' }));
    const e = engine;
    const base = await step('base', () => importBaseImage(e, { cacheDir: dockerCacheDir() }));
    const natsImage = await step('natsImage', () => buildNatsImage(e, base.tag));
    await step('image', () =>
      e.docker(
        [
          'build',
          // The engine has no bridge to the outside: the build reaches the npm registry as the host does.
          '--network',
          'host',
          '-f',
          'deploy/Dockerfile',
          '--build-arg',
          `NODE_IMAGE=${base.tag}`,
          '-t',
          IMAGE,
          '.',
        ],
        { cwd: REPO_ROOT, env: e.env(), timeoutMs: 1_200_000 },
      ),
    );
    process.stdout.write(
      `docker: engine ${e.storageDriver} in ${e.dir}; base ${base.built ? 'built' : 'cached'} in ${dockerCacheDir()}; ` +
        `${Object.entries(timings)
          .map(([k, v]) => `${k} ${v}s`)
          .join(', ')}\n`,
    );
    project.provide('docker', {
      host: e.host,
      env: e.env(),
      dir: e.dir,
      storageDriver: e.storageDriver,
      baseImage: base.tag,
      natsImage,
      image: IMAGE,
      timings,
      baseBuilt: base.built,
    });
    project.provide('dockerSkipReason', '');
  } catch (e) {
    await engine?.stop();
    throw e;
  }
  return async () => {
    await engine!.stop();
  };
}
