/**
 * Every service stopped (SIGTERM, as `up`'s Ctrl-C or an init system does) after its nats-server
 * has already gone: each exits 0, says nothing failed, and a bridge leaves its signal to fade
 * rather than wait out the client's timeout for a withdrawal nobody can take, and the scheduler
 * does not wait for its periodic rescan of the bucket, which waits out JetStream's retries (about
 * 40 s) while the server is away. Times are not asserted; the stop's own bound (the service's exit 1
 * after 10 s, or SIGKILL then, exit code null) is what fails a hang.
 */
import { startMesh, startNatsServer, eventually, type Mesh, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, expect, it } from 'vitest';

let nats: NatsServerHandle | undefined;
let mesh: Mesh | undefined;

afterAll(async () => {
  await mesh?.stop();
  await nats?.stop();
});

/** Log lines of `output` from its "shutting down" on. */
const afterShutdown = (output: string) => output.slice(output.indexOf('"msg":"shutting down"'));

it('stops every service cleanly when NATS went first', async () => {
  nats = await startNatsServer();
  // A rescan every second: one has started since the server went when the scheduler is told to stop.
  const serviceEnv = { scheduler: { SCHEDULER_RESCAN_MS: '1000' } };
  mesh = await startMesh({ nats, guard: true, scheduler: true, serviceEnv, sessions: [{ name: 'alpha' }] });
  const services = [...mesh.services];
  const bridge = mesh.bridges.get('alpha')!;

  nats.kill();
  // Each has seen the server go before it is told to stop.
  for (const s of services) await eventually(() => s.output().includes('"status":"disconnect"'), 30_000, 100);
  await new Promise((resolve) => setTimeout(resolve, 2500));

  const codes = await Promise.all(services.map((s) => s.stop('SIGTERM')));
  for (const [i, s] of services.entries()) {
    const out = afterShutdown(s.output());
    expect(codes[i], out).toBe(0);
    expect(out, 'nothing logged as failed after "shutting down"').not.toMatch(/"level":(50|60)/);
    expect(out).toContain('connection closed without draining');
  }
  expect(afterShutdown(bridge.output())).toContain('signal not withdrawn at stop');
}, 120_000);
