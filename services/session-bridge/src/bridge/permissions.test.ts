import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import type { Core } from './core.js';
import { PermissionRelay } from './permissions.js';
import { SessionView } from './view.js';

/**
 * What the relay does with the ledger's answer to showing a prompt. The ledger here is a stand-in
 * that refuses or takes each write as the case needs (a NATS outage cannot be timed to one write);
 * what crosses processes is in test/e2e/permission-relay.test.ts.
 */
function setup(write: () => Promise<unknown>) {
  const view = new SessionView();
  view.start({ key: 'k.t', taskId: 's:t' }, 'TASK_STATE_WORKING');
  const answered: [string, boolean][] = [];
  let writes = 0;
  const core = {
    view,
    ledger: { transition: async () => (writes++, write()) },
    harness: () => ({ answerPermission: (id: string, allow: boolean) => answered.push([id, allow]) }),
    log: { info: () => {}, warn: () => {} },
  } as unknown as Core;
  return { relay: new PermissionRelay(core), answered, writes: () => writes };
}

describe('PermissionRelay.ask', () => {
  it('denies a prompt it could not show on its task, so the session does not wait on it for good', async () => {
    const t = setup(() => Promise.reject(new ShroomsError('NATS_UNAVAILABLE', 'NATS is away')));
    await t.relay.ask({ id: 'p1', tool: 'Bash', input: {} });
    expect(t.answered).toEqual([['p1', false]]);
  });

  it('keeps a second prompt of the task until the first is answered', async () => {
    const t = setup(async () => ({}));
    await t.relay.ask({ id: 'p1', tool: 'Bash', input: {} });
    await t.relay.ask({ id: 'p2', tool: 'WebFetch', input: {} });
    expect([t.writes(), t.answered]).toEqual([1, []]);
  });

  it('shows the next prompt at once once the harness has none open (a withdrawn one, a turn gone)', async () => {
    const t = setup(async () => ({}));
    await t.relay.ask({ id: 'p1', tool: 'Bash', input: {} });
    t.relay.noneOpen();
    await t.relay.ask({ id: 'p2', tool: 'WebFetch', input: {} });
    expect(t.writes()).toBe(2);
  });
});
