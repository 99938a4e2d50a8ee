/**
 * The `interop` project's one mesh: `shrooms-agent up` exactly as a new user runs it (NATS, gateway,
 * guard, scheduler, the `demo` echo session), on a free port with its state in a temp folder. Every
 * file drives it with a real client nobody here wrote, from the endpoint `up` printed.
 */
import type { TestProject } from 'vitest/node';
import { CLI, freePort, parseUpOutput, runTs, tempDir } from '@shrooms/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The A2A endpoint `up` printed, as printed. */
    endpoint: string;
    gatewayUrl: string;
    natsUrl: string;
    machine: string;
    /** `up`'s state folder, which is also the demo session's working directory. */
    stateDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const temp = await tempDir('shrooms-interop');
  const state = temp.path;
  const port = await freePort();
  const machine = 'interop';
  const up = runTs(CLI, ['up', '--port', String(port)], {
    SHROOMS_STATE_DIR: state,
    SHROOMS_MACHINE: machine,
    // Every file asks the one demo session; the loop guard's default (30 an hour) would refuse.
    GUARD_RATE_MAX: '1000',
  });
  try {
    const out = await up.waitFor(/Press Ctrl-C to stop/, 120_000);
    void out;
  } catch (err) {
    await up.stop();
    await temp.remove();
    throw err;
  }
  const printed = parseUpOutput(up.output());
  project.provide('endpoint', printed.endpoint);
  project.provide('gatewayUrl', printed.gatewayUrl);
  project.provide('natsUrl', printed.natsUrl);
  project.provide('machine', machine);
  project.provide('stateDir', state);
  return async () => {
    try {
      await up.stop('SIGINT');
    } finally {
      await temp.remove();
    }
  };
}
