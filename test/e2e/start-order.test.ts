/**
 * A bridge may start before the gateway that owns the buckets (`up` after a reboot, a unit started
 * early, a test): with the generated NATS permissions it may not create the signal field or the
 * ledger, so it waits for them instead of failing — and binds once the gateway has made them.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { BUCKETS, keys, subjects } from '@shrooms/protocol';
import { Ledger, SignalField } from '@shrooms/ledger';
import { prepareLocalNats, startNatsServer, tempDir, type LocalNats, type NatsServerHandle, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

let dir: TempDir | undefined;
let auth!: LocalNats;
let server: NatsServerHandle;
const open: NatsConnection[] = [];
const login = async (role: 'gateway' | 'bridge' | 'admin', inboxPrefix?: string) => {
  const { NATS_USER: user, NATS_PASS: pass } = auth.login(role);
  const nc = await connect({ servers: server.url, user, pass, ...(inboxPrefix ? { inboxPrefix } : {}) });
  open.push(nc);
  return nc;
};

beforeAll(async () => {
  dir = await tempDir('shrooms-start-order');
  // The generated users, as `up` makes them; the passwords go to the server only, not to process.env.
  auth = await prepareLocalNats(dir.path, 'laptop');
  server = await startNatsServer({ args: ['-c', auth.confFile], env: auth.serverEnv });
});

afterAll(async () => {
  try {
    for (const nc of open) await nc.close().catch(() => {});
    await server?.stop();
  } finally {
    await dir?.remove();
  }
});

it('a bridge started before the gateway waits for the buckets, then binds and signals', async () => {
  const admin = await login('admin');
  // Every stream-info request for the signal field, as the server sees it.
  const infos = admin.subscribe(`$JS.API.STREAM.INFO.KV_${BUCKETS.signals}`);
  await admin.flush();

  const bridge = await login('bridge', subjects.bridgeInbox('laptop'));
  const bridgeSignals = SignalField.open(bridge, { ttlMs: 60_000 });
  const bridgeLedger = Ledger.bind(bridge, { probeKey: keys.task('laptop', 'demo', 'ledger-probe') });
  // The bridge has been refused the creation and is asking again for the stream: it waits.
  let seen = 0;
  const polling = (async () => {
    for await (const _ of infos) if (++seen >= 2) return 'waiting';
    return 'closed';
  })();
  await expect(Promise.race([polling, bridgeSignals.then(() => 'opened before the gateway')])).resolves.toBe('waiting');

  const gateway = await login('gateway');
  await Ledger.open(gateway, { owner: true });
  const gatewaySignals = await SignalField.open(gateway, { ttlMs: 60_000 });

  const signals = await bridgeSignals;
  await bridgeLedger;
  await signals.renew({
    machine: 'laptop',
    session: 'demo',
    harness: 'echo',
    state: 'idle',
    openTasks: 0,
    queuedTasks: 0,
    autoApprove: false,
    remindersStopped: false,
  });
  expect((await gatewaySignals.list()).map((s) => `${s.machine}/${s.session}`)).toEqual(['laptop/demo']);
}, 60_000);
