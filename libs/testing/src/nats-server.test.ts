// startNatsServer's own folders: a kept `runDir` (as `up` uses) holds no temporary folder, and keeps
// nothing of a launch after stop.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startNatsServer } from './nats-server.js';
import { tempDir } from './temp.js';

it('keeps a server started with runDir in that folder, and leaves no ports folder there after stop', async () => {
  const state = await tempDir('shrooms-nats-rundir');
  try {
    const runDir = join(state.path, 'nats-run');
    const nats = await startNatsServer({ runDir });
    expect(readdirSync(runDir).some((f) => f.startsWith('ports-'))).toBe(true);
    await nats.restart();
    await nats.stop();
    expect(readdirSync(runDir).filter((f) => f.startsWith('ports-'))).toEqual([]);
  } finally {
    await state.remove();
  }
});
