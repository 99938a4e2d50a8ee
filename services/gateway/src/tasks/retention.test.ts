/**
 * The listing index lets a finished task go when the ledger does: a week after its last write (the
 * bucket's age limit), not a week after its status time. A task written long after its status
 * changed — an ack, a task brought over from elsewhere — stays listed while GetTask still finds it,
 * and its session stays a session. On a real nats-server, through the gateway's routes.
 */
import { expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '@shrooms/protocol';
import { Ledger, transitions } from '@shrooms/ledger';
import { useTestGateway } from '../testing/gateway.js';
import { askedTask } from '../testing/tasks.js';

const t = useTestGateway();
const DAY = 24 * 60 * 60 * 1000;

/** A task of `session` that finished `daysAgo` days ago by its status, written to the ledger now. */
async function finishedLongAgo(session: string, id: string, daysAgo: number) {
  const then = new Date(Date.now() - daysAgo * DAY);
  const entry = askedTask(session, id, { device: 'box', now: then });
  const done = transitions.complete(transitions.start(entry, then), 'hello', then);
  await t.ledger.create(t.ledger.key('box', session, id), done);
}

const rpc = async (session: string, method: string, params: unknown) =>
  (await t.gw.app.inject({ method: 'POST', url: `/a2a/${session}`, payload: { jsonrpc: '2.0', id: 1, method, params } })).json();
const listed = async (session: string) =>
  ((await rpc(session, 'ListTasks', {})).result?.tasks ?? []).map((x: { id: string }) => x.id).sort() as string[];

it('keeps listing a task the ledger keeps, whose status is older than the retention', async () => {
  // Read when the session's index is built (the first listing) …
  await finishedLongAgo('kept', 'm-1', 8);
  expect(await listed('kept')).toEqual(['kept:m-1']);
  // … and brought by the ledger's watch once it is.
  await finishedLongAgo('kept', 'm-2', 9);
  await expect.poll(() => listed('kept')).toEqual(['kept:m-1', 'kept:m-2']);

  // The gateway's minute sweep, as it runs a week after now: both were written just now.
  expect(t.gw.live.pruneFinished(Date.now() - DEFAULT_LIMITS.finishedRetentionMs)).toBe(0);
  expect(await listed('kept')).toEqual(['kept:m-1', 'kept:m-2']);
  expect((await rpc('kept', 'GetTask', { id: 'kept:m-2' })).result.status.state).toBe('TASK_STATE_COMPLETED');

  // Once their writes are older than the retention, they go (the ledger has let them go then).
  expect(t.gw.live.pruneFinished(Date.now() + 1000)).toBe(2);
});

it("follows the bucket's retention when another machine's gateway, started later, changes it", async () => {
  // Read now; the bucket as this gateway's ledger found it: a week.
  await finishedLongAgo('moved', 'm-1', 0);
  await finishedLongAgo('moved', 'm-2', 0);
  expect(await listed('moved')).toEqual(['moved:m-1', 'moved:m-2']);
  try {
    // The other gateway owns the bucket too and makes its 1.5 s the bucket's: the ledger drops both …
    await Ledger.open(t.nats.nc, { limits: { finishedRetentionMs: 1500 }, owner: true });
    await expect.poll(() => t.ledger.get(t.ledger.key('box', 'moved', 'm-2')), { timeout: 15_000 }).toBeNull();
    // … which tells no watch: the index holds them (until a page reads them) until the sweep, which
    // reads the bucket's retention again and lets them go (once their write, in whole seconds up, is
    // older than it).
    let pruned = 0;
    await expect.poll(async () => (pruned += await t.gw.live.pruneByRetention()), { timeout: 10_000 }).toBe(2);
    expect([await listed('moved'), t.ledger.retentionMs]).toEqual([[], 1500]);
  } finally {
    await Ledger.open(t.nats.nc, { owner: true });
  }
});
