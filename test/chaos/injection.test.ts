/**
 * Subject and key injection (spec §2, §3): session names and message ids with `.`, `*`, `>`,
 * spaces, control characters and look-alike escapes never reach another session's subjects or
 * KV keys. Checked where it matters — on the wire (every subject published while the test runs)
 * and in the ledger (every KV key written) — with sessions chosen to collide if encoding slipped:
 * `a`, `a.b`, `a_2Eb` (the literal text `a.b` would encode to). A bridge under the hostile name
 * `a.> *` cannot start at all (its refusal is tested in test/e2e/cli.test.ts), so a delivery for it
 * meets no one.
 */
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { META, decodeToken, encodeToken, keys, subjects, textOf } from '@shrooms/protocol';
import { eventually, reportChaos, rpc, startMesh, type Mesh } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger, type LedgerView } from './support/ledger.js';
import { pct } from './fuzz/cases.js';

const HOSTILE_SESSION = 'a.> *';
const SESSIONS = ['a', 'a.b', 'a_2Eb'];
/** Message ids a sender may choose (printable: all accepted) … */
const IDS = [
  'x.>',
  '*',
  '>',
  'a b',
  '..',
  '.',
  'x.*.y',
  'a.b',
  '_2E',
  'x_2E_3E',
  'x_2E>',
  '%2F',
  '$KV.shrooms_tasks.>',
  'a:b:c',
  '/',
  'x/..',
  'é😀',
  '\u2028\u2029',
  '\ufeff',
  'x'.repeat(128),
];
/** … and ones the gateway must refuse (control characters). */
const REFUSED_IDS = ['tab\there', 'nul\u0000', 'nl\nx', 'del\u007f'];
const SAFE_TOKEN = /^[A-Za-z0-9_-]+$/;

let mesh: Mesh;
let nc: NatsConnection;
let ledger: LedgerView;
let wire: Subscription;
const seen: string[] = [];
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  mesh = await startMesh({ sessions: SESSIONS.map((name) => ({ name })) });
  for (const s of SESSIONS)
    await eventually(async () => (await rpc(`${mesh.gatewayUrl}/a2a/${pct(s)}`, 'ListTasks', {})).result, 30_000, 100);
  nc = await connect({ servers: mesh.nats.url });
  ledger = await openLedger(nc);
  // Everything on the wire from here on.
  wire = nc.subscribe('>');
  void (async () => {
    for await (const m of wire) seen.push(m.subject);
  })();
  // Only once nats-server has the subscription: a delivery sent before it would go unseen.
  await nc.flush();
}, 120_000);

afterAll(async () => {
  wire?.unsubscribe();
  await nc?.close();
  await mesh?.stop();
  await reportChaos('subject injection', [
    {
      scenario: 'subject/key injection',
      load: `${IDS.length} hostile ids × ${SESSIONS.length} sessions + hostile session names`,
      faults: '`.` `*` `>` spaces, controls, escapes in names and ids',
      acknowledged: Number(figures.tasks ?? 0),
      lost: 0,
      stuck: 0,
      recoveryMs: null,
      notes: `${figures.subjectsChecked ?? 0} subjects and ${figures.keysChecked ?? 0} keys checked: all encoded, none crossed sessions`,
      details: figures,
    },
  ]);
});

const send = (session: string, messageId: string, text: string, extra: Record<string, unknown> = {}) =>
  rpc(`${mesh.gatewayUrl}/a2a/${pct(session)}`, 'SendMessage', { message: { messageId, role: 'ROLE_USER', parts: [{ text }], ...extra } });

describe('hostile names and ids', () => {
  it("keeps every session's tasks under its own key, whatever the message id", async () => {
    for (const s of SESSIONS) {
      for (const id of IDS) {
        const r = await send(s, id, `${s} ${id} end`);
        expect(r.result?.task.id, `${s}:${JSON.stringify(id)}`).toBe(`${s}:${id}`);
        expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
        expect(textOf(r.result.task.artifacts[0])).toBe(`${s} ${id} end`);
      }
      for (const id of REFUSED_IDS) expect((await send(s, id, 'refused')).error?.code).toBe(-32602);
    }
    const all = await ledger.all(mesh.machine);
    figures.keysChecked = all.size;
    for (const [key, task] of all) {
      const tokens = key.split('.');
      expect(tokens, key).toHaveLength(3);
      for (const t of tokens) expect(t, key).toMatch(SAFE_TOKEN);
      const [machine, session, messageId] = tokens.map(decodeToken);
      expect(machine).toBe(mesh.machine);
      // The key names the task it holds: its session and message id, exactly.
      expect(task.id).toBe(`${session}:${messageId}`);
      expect(task.metadata?.[META.session]).toBe(session);
    }
    for (const s of SESSIONS) {
      const mine = [...all.keys()].filter((k) => k.startsWith(`${keys.tasksOfSession(mesh.machine, s).slice(0, -1)}`));
      expect(mine.map((k) => decodeToken(k.split('.')[2]!)).sort()).toEqual([...IDS].sort());
    }
    figures.tasks = all.size;
  });

  it('never puts a raw name or id on the wire: every subject of the mesh is made of encoded tokens', async () => {
    // Everything the earlier tests caused has reached the wire tap: a marker sent after them came back.
    const marker = `test.marker.${Date.now()}`;
    nc.publish(marker);
    await eventually(() => seen.includes(marker), 10_000, 20);
    const ours = seen.filter((s) => s.startsWith('shrooms.') || s.startsWith('$KV.shrooms_'));
    figures.subjectsChecked = ours.length;
    expect(ours.length).toBeGreaterThan(0);
    for (const subject of ours) {
      const tokens = subject.split('.');
      const userTokens = subject.startsWith('$KV.')
        ? tokens.slice(2)
        : tokens.slice(2, tokens[1] === 'bridge' || tokens[1] === 'notify' ? 4 : undefined);
      for (const t of userTokens) expect(t, subject).toMatch(SAFE_TOKEN);
      if (tokens[1] === 'bridge') {
        expect(tokens, subject).toHaveLength(5);
        expect([...SESSIONS, HOSTILE_SESSION]).toContain(decodeToken(tokens[3]!));
      }
    }
    // Deliveries for `a` went to `a`'s subject only as often as `a` was asked.
    const deliverA = seen.filter((s) => s === subjects.bridge(mesh.machine, 'a', 'deliver')).length;
    expect(deliverA).toBe(IDS.length);
  });

  it('refuses session names with `.`, `*`, `>`, spaces or controls at the gateway and writes nothing', async () => {
    const before = (await ledger.all(mesh.machine)).size;
    const mark = seen.length;
    const names = ['a.>', 'a.*', '*', '>', 'a b', 'a\u0001', 'a\nb', 'a/..', '..', '.a', HOSTILE_SESSION, `a.${'>'}`];
    const codes = new Set<number>();
    for (const n of names) codes.add((await send(n, `inj-${encodeToken(n)}`, 'should not arrive')).error?.code);
    // No such session (-32056), or no such route at all (404: `a%2F..` is decoded before routing).
    expect([...codes].filter((c) => c !== -32056 && c !== 404)).toEqual([]);
    expect((await ledger.all(mesh.machine)).size).toBe(before);
    expect(seen.slice(mark).filter((s) => s.startsWith('shrooms.bridge.'))).toEqual([]);
  });

  it("never lets a task id of one session reach another session's task", async () => {
    const victim = await ledger.kv.get(keys.task(mesh.machine, 'a', 'x.>'));
    const foreign = ['a:x.>', 'a:*', 'testbox/a:x.>', 'a.b:x.>'.replace('a.b', 'a'), 'a_2Eb:x.>'];
    for (const s of ['a.b', 'a_2Eb']) {
      for (const id of foreign.filter((f) => !f.startsWith(`${s}:`))) {
        for (const method of ['GetTask', 'CancelTask', 'AckTask', 'SubscribeToTask']) {
          expect((await rpc(`${mesh.gatewayUrl}/a2a/${pct(s)}`, method, { id })).error?.code, `${method} ${id} on ${s}`).toBe(-32001);
        }
        expect((await send(s, `answer-${encodeToken(id)}`, 'x', { taskId: id })).error?.code).toBe(-32001);
      }
    }
    // `a`'s task did not change (same revision), and POST /a2a routes by the id's own session.
    expect((await ledger.kv.get(keys.task(mesh.machine, 'a', 'x.>')))?.revision).toBe(victim?.revision);
    const routed = await rpc(`${mesh.gatewayUrl}/a2a`, 'GetTask', { id: 'a.b:x.>' });
    expect(routed.result.id).toBe('a.b:x.>');
    expect(textOf(routed.result.artifacts[0])).toBe('a.b x.> end');
  });

  it('delivers nothing for a hostile session name: no bridge can run under it, and `a` refuses it', async () => {
    // Sent straight to NATS, past the gateway's refusal: the encoded subject has no responder. The
    // wire recorder (`>`) would count as interest and turn "no responders" into a timeout, so it
    // stops here; the tests that read it ran above.
    wire.unsubscribe();
    await nc.flush();
    // A delivery naming the hostile session, sent to the bridge subject of `to`.
    const deliver = (to: string, messageId: string) =>
      nc.request(
        subjects.bridge(mesh.machine, to, 'deliver'),
        JSON.stringify({
          machine: mesh.machine,
          session: HOSTILE_SESSION,
          message: { messageId, role: 'ROLE_USER', parts: [{ text: 'hostile' }] },
          origin: { device: mesh.machine },
        }),
        { timeout: 5_000 },
      );
    await expect(deliver(HOSTILE_SESSION, 'x.>')).rejects.toThrow(/no responders/i);
    expect(await ledger.get(mesh.machine, HOSTILE_SESSION, 'x.>')).toBeUndefined();
    // A delivery addressed to `a` but naming the hostile session is refused by `a`'s bridge.
    const wrong = await deliver('a', 'cross');
    expect(wrong.json<{ ok: boolean; error?: { key: string } }>().error?.key).toBe('SESSION_NOT_FOUND');
    expect(await ledger.get(mesh.machine, HOSTILE_SESSION, 'cross')).toBeUndefined();
    expect(await ledger.get(mesh.machine, 'a', 'cross')).toBeUndefined();
  });

  it('encodes names injectively: distinct names never share a subject token or key', () => {
    const names = [
      'a',
      'a.b',
      'a_2Eb',
      'a_b',
      'a b',
      'a.>',
      'a.*',
      'a_2E_3E',
      '>',
      '*',
      '.',
      '_',
      '_5F',
      'é',
      '\u00e9',
      'e\u0301',
      '\u2028',
      'a\u0000',
      'A',
      'a-b',
    ];
    const tokens = names.map(encodeToken);
    expect(new Set(tokens).size).toBe(new Set(names).size);
    for (const [i, t] of tokens.entries()) {
      expect(t).toMatch(SAFE_TOKEN);
      expect(decodeToken(t)).toBe(names[i]);
      expect(subjects.bridge('m', names[i]!, 'deliver').split('.')).toHaveLength(5);
      expect(keys.task('m', names[i]!, names[i]!).split('.')).toHaveLength(3);
    }
  });
});
