import { configDefaults, defineConfig } from 'vitest/config';

// Projects: `unit` (beside the code, in-process, may use a real nats-server), `e2e` (root test/,
// cross-process), `interop` (real third-party A2A/MCP clients against one `up`; serial), `harness`
// (real claude, pi and ACP agent CLIs; serial, generous timeouts), `chaos` (kills, failovers,
// fuzzing), `docker` (a private Docker engine: the image built from deploy/Dockerfile, the compose
// file run; skipped, saying why, where no engine can start), `machines` (machines as network
// namespaces on real WireGuard, set up with `shrooms-agent mesh`; root, else skipped saying why),
// `bench` (a quick bench run end to end).
// No test asserts a wall-clock time.
const resolve = { conditions: ['development'] };
/** Cross-process projects run the compiled CLI where people do: built first when needed. */
const build = 'test/build.setup.ts';
/** First in every project: its teardown, the last to run, fails the run on temp folders left behind. */
const temp = 'test/temp.setup.ts';

export default defineConfig({
  resolve,
  test: {
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          globalSetup: [temp, 'test/page.setup.ts'],
          include: ['libs/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'scripts/**/*.test.ts', 'bench/src/**/*.test.ts'],
          // A quick bench run end to end: its own project (`bench`), run once.
          exclude: [...configDefaults.exclude, 'bench/src/smoke.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        resolve,
        test: {
          name: 'e2e',
          globalSetup: [temp, build],
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          maxWorkers: 2,
        },
      },
      {
        resolve,
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          globalSetup: [temp, build, 'test/interop/setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // One demo session behind one `up`: files take turns.
          fileParallelism: false,
          maxWorkers: 1,
        },
      },
      {
        resolve,
        test: {
          name: 'harness',
          globalSetup: [temp, build],
          include: ['test/harness/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          maxWorkers: 1,
        },
      },
      {
        resolve,
        test: {
          name: 'chaos',
          globalSetup: [temp, build],
          include: ['test/chaos/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          maxWorkers: 1,
        },
      },
      {
        resolve,
        test: {
          name: 'docker',
          include: ['test/docker/**/*.test.ts'],
          globalSetup: [temp, 'test/docker/setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          maxWorkers: 1,
        },
      },
      {
        resolve,
        test: {
          name: 'machines',
          globalSetup: [temp, build],
          include: ['test/machines/**/*.test.ts'],
          testTimeout: 300_000,
          // The rig may wait for another run of it on the same host to finish (a lock, libs/testing).
          hookTimeout: 900_000,
          // One retry: a scenario over four machines of namespaces, WireGuard and real units can still
          // fail one attempt on the shared machine — a route to a machine cut off not dropped, a
          // signal lapsing in a JetStream stall under load (docs/reliability.md, Machines: what was
          // flaky); a failure twice in a row still fails the run.
          retry: 1,
          fileParallelism: false,
          maxWorkers: 1,
        },
      },
      {
        resolve,
        test: {
          name: 'bench',
          globalSetup: [temp],
          // `pnpm bench --quick` end to end, as on a fresh clone (it builds first itself): every
          // figure written, every aim judged. Judges no figure: no test asserts a time.
          include: ['bench/src/smoke.test.ts'],
          testTimeout: 900_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
