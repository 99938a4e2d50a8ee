#!/usr/bin/env node
// Writes permissions.conf: the NATS users of the mesh and their least-privilege permissions
// (spec §6). Node 20+, no dependencies, so deploy scripts can run it anywhere.
//
//   node deploy/nats/gen-permissions.mjs --local laptop --machine pi5 --machine homeserver \
//        --out deploy/nats/permissions.conf
//
//   --local M     the bridges of machine M log in as user `bridge` ($NATS_BRIDGE_PASSWORD): the
//                 machine the compose/k3s stack runs on
//   --machine M   (repeatable) the bridges of machine M log in as `bridge-M` ($NATS_BRIDGE_<M>_PASSWORD)
//   --session M/S (repeatable) the bridge of session S of machine M alone logs in as `bridge-M-S`
//                 ($NATS_BRIDGE_<M>_<S>_PASSWORD): least privilege per session; a session of the
//                 --local machine as `session-S` ($NATS_SESSION_<S>_PASSWORD), names that do not
//                 depend on the machine, so compose files and manifests can spell them
//   --no-admin    leave out the operators' `admin` user (full access, for the nats CLI)
//   --out FILE    write FILE instead of standard output
//
// The subjects below mirror libs/protocol/src/subjects.ts (the only place subjects are built in
// code); test/e2e/nats-permissions.test.ts checks that they agree and that the server enforces them.
//
// Over 300 lines: it runs with no dependencies wherever deploy scripts run (so it imports none of our
// packages), and the users, their permissions and the rendering are one generator.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

// ---- names, as libs/protocol builds them -----------------------------------------------------

/** encodeToken: letters, digits and `-` stay; every other UTF-8 byte becomes `_XX`. */
export function encodeToken(raw) {
  if (!raw) throw new Error('cannot encode an empty token');
  let out = '';
  for (const ch of raw) {
    if (/^[A-Za-z0-9-]$/.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '_' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * How long after receiving a request a user may still answer it (allow_responses): as long as the
 * requests of the mesh wait by default (a delivery, a schedule: LIMIT_DELIVERY_ACK_MS, 5 s; the
 * guard: 2 s) — a later answer nobody would read. NATS's own default is two minutes, and
 * nats-server 2.9 (Debian's, what `up` runs) remembers for that long the reply-to subject of every
 * message it delivers to the user — each ledger change a watch brings has one — and once it holds
 * over 4,096 walks them all on each message delivered: above ~34 such messages a second the
 * server's CPU grows with the square of the rate (measured: its CPU per task 2.5× at a few
 * hundred tasks a second). Five seconds keeps that under 4,096 up to ~800 a second per connection.
 */
export const REPLY_WINDOW = '5s';
const BUCKET = {
  tasks: 'shrooms_tasks',
  signals: 'shrooms_signals',
  guard: 'shrooms_guard',
  guardPolicy: 'shrooms_guard_policy',
  schedules: 'shrooms_schedules',
};
const SERVICE = { gateway: 'shrooms-gateway', bridge: 'shrooms-bridge', guard: 'shrooms-guard', scheduler: 'shrooms-scheduler' };

export const bridgeInbox = (machine) => `_INBOX_bridge.${encodeToken(machine)}`;

// ---- JetStream API subjects a KV client uses ---------------------------------------------------
// What @nats-io/kv 3.x sends against nats-server 2.9+ (seen on the wire): $JS.API.INFO when it binds;
// STREAM.INFO.<stream> from Kvm.create on an existing bucket (STREAM.CREATE only when it is missing);
// DIRECT.GET.<stream>.<subject> for get (the key in the subject, so permissions can scope reads) or
// STREAM.MSG.GET.<stream> when opened with Kvm.open; CONSUMER.CREATE.<stream>.<name>.<filter> for
// watch/keys (the filter in the subject, so permissions can scope watches) and CONSUMER.INFO for
// keys; flow-control replies on $JS.FC.<stream>.>; puts are publishes on $KV.<bucket>.<key>.

const js = '$JS.API';
const stream = (bucket) => `KV_${bucket}`;

/** Everything a service needs on a bucket it owns: create it, read, write, watch. */
function kvOwner(bucket) {
  const s = stream(bucket);
  return [
    `$KV.${bucket}.>`,
    `${js}.STREAM.INFO.${s}`,
    `${js}.STREAM.CREATE.${s}`,
    `${js}.DIRECT.GET.${s}`,
    `${js}.DIRECT.GET.${s}.>`,
    `${js}.STREAM.MSG.GET.${s}`,
    `${js}.CONSUMER.CREATE.${s}`,
    `${js}.CONSUMER.CREATE.${s}.>`,
    `${js}.CONSUMER.INFO.${s}.*`,
    `${js}.CONSUMER.DELETE.${s}.*`,
    `$JS.FC.${s}.>`,
  ];
}

/** Read and watch every key of a bucket (no writes, no creating it). */
function kvReader(bucket) {
  const s = stream(bucket);
  return [
    `${js}.STREAM.INFO.${s}`,
    `${js}.DIRECT.GET.${s}`,
    `${js}.DIRECT.GET.${s}.>`,
    `${js}.STREAM.MSG.GET.${s}`,
    `${js}.CONSUMER.CREATE.${s}.>`,
    `${js}.CONSUMER.INFO.${s}.*`,
    `${js}.CONSUMER.DELETE.${s}.*`,
    `$JS.FC.${s}.>`,
  ];
}

/**
 * Read, watch and write only the keys under `prefix` (`M.>`, `M.S.>`): one machine's or one
 * session's part of a bucket. No STREAM.INFO: with a subject filter it lists every key of the
 * stream, every machine's; bridges bind without it (Ledger.bind).
 */
function kvScoped(bucket, prefix) {
  const s = stream(bucket);
  return [
    `$KV.${bucket}.${prefix}`,
    `${js}.DIRECT.GET.${s}.$KV.${bucket}.${prefix}`,
    `${js}.CONSUMER.CREATE.${s}.*.$KV.${bucket}.${prefix}`,
    `${js}.CONSUMER.INFO.${s}.*`,
    `$JS.FC.${s}.>`,
  ];
}

/**
 * What no role but the gateway (which creates and hardens the ledger and the signal field) may ask
 * of their streams, denied explicitly so that no allow-list widened later lets it through: purge,
 * update (turning rollups or purges back on), delete, message delete, and STREAM.INFO of the ledger
 * (its subject filter lists every machine's keys). Rollup headers are refused by the streams
 * themselves (allow_rollup_hdrs false, deny_purge true; libs/ledger harden.ts): a permission cannot
 * see headers.
 */
function storeDeny({ info = true } = {}) {
  return [BUCKET.tasks, BUCKET.signals].flatMap((b) => [
    `${js}.STREAM.PURGE.${stream(b)}`,
    `${js}.STREAM.UPDATE.${stream(b)}`,
    `${js}.STREAM.DELETE.${stream(b)}`,
    `${js}.STREAM.MSG.DELETE.${stream(b)}`,
    ...(info && b === BUCKET.tasks ? [`${js}.STREAM.INFO.${stream(b)}`] : []),
  ]);
}

/** The services API ($SRV.PING|INFO|STATS[.name[.id]]) for one service name. */
const srv = (name) => ['$SRV.*', `$SRV.*.${name}`, `$SRV.*.${name}.*`];

// ---- users ---------------------------------------------------------------------------------------

export function serviceUsers() {
  return [
    {
      user: 'gateway',
      password: 'NATS_GATEWAY_PASSWORD',
      why: 'A2A edge: admits new tasks (in its process or by asking the guard), delivers to every session of its machine, writes and reads the ledger, reads signals',
      publish: [
        'shrooms.bridge.>',
        'shrooms.guard.admit',
        'shrooms.guard.control',
        'shrooms.sched.>',
        'shrooms.refusal.>',
        `${js}.INFO`,
        ...kvOwner(BUCKET.tasks),
        ...kvOwner(BUCKET.signals).filter((s) => !s.startsWith('$KV.')),
        // It hardens the two stores (no rollups, no purges) after creating them.
        `${js}.STREAM.UPDATE.${stream(BUCKET.tasks)}`,
        `${js}.STREAM.UPDATE.${stream(BUCKET.signals)}`,
        // It reads schedules to tell an occurrence from a request that only claims to be one: from
        // any replica, or from the stream's leader when a replica does not answer (one cut off).
        `${js}.DIRECT.GET.${stream(BUCKET.schedules)}.>`,
        `${js}.STREAM.MSG.GET.${stream(BUCKET.schedules)}`,
        // GATEWAY_GUARD=local: it admits new tasks itself over the guard's windows and rules — no
        // more than it could already do through shrooms.guard.control, and a gateway that would skip
        // admission can do so without them.
        ...kvOwner(BUCKET.guard),
        ...kvOwner(BUCKET.guardPolicy),
      ],
      subscribe: [
        '_INBOX.>',
        ...srv(SERVICE.gateway),
        'shrooms.signal.>',
        'shrooms.notify.>',
        'shrooms.refusal.>',
        `$KV.${BUCKET.tasks}.>`,
        `$KV.${BUCKET.signals}.>`,
      ],
    },
    {
      user: 'guard',
      password: 'NATS_GUARD_PASSWORD',
      why: 'admission: answers shrooms.guard.*, owns its windows and rules, reads signals (autoApprove)',
      publish: ['shrooms.refusal.>', `${js}.INFO`, ...kvOwner(BUCKET.guard), ...kvOwner(BUCKET.guardPolicy), ...kvReader(BUCKET.signals)],
      deny: storeDeny({ info: false }),
      subscribe: ['_INBOX.>', ...srv(SERVICE.guard), 'shrooms.guard.>'],
    },
    {
      user: 'scheduler',
      password: 'NATS_SCHEDULER_PASSWORD',
      why: 'timed tasks: answers shrooms.sched.*, owns the schedules, reads the ledger and signals (delivery goes through a gateway over A2A)',
      publish: [
        `${js}.INFO`,
        ...kvOwner(BUCKET.schedules),
        // It takes removed schedules' markers out of its own stream (its rescans would read them for good).
        `${js}.STREAM.PURGE.${stream(BUCKET.schedules)}`,
        ...kvReader(BUCKET.tasks),
        ...kvReader(BUCKET.signals),
      ],
      deny: storeDeny({ info: false }),
      subscribe: ['_INBOX.>', ...srv(SERVICE.scheduler), 'shrooms.sched.>'],
    },
  ];
}

/** The user of one machine's bridges: its own sessions' ledger entries, signals and deliveries only. */
export function bridgeUser(machine, { local = false } = {}) {
  if (!NAME_RE.test(machine) || machine.length > 64) throw new Error(`not a machine name: ${JSON.stringify(machine)}`);
  const m = encodeToken(machine);
  return {
    user: local ? 'bridge' : `bridge-${machine}`,
    password: local ? 'NATS_BRIDGE_PASSWORD' : `NATS_BRIDGE_${machine.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PASSWORD`,
    why: `the bridges of machine ${machine}; connect with inboxPrefix "${bridgeInbox(machine)}"`,
    publish: [
      ...kvScoped(BUCKET.tasks, `${m}.>`),
      // Readiness probes write under `_health.MACHINE.*` (never a task key).
      `$KV.${BUCKET.tasks}._health.${m}.>`,
      `$KV.${BUCKET.signals}.${m}.>`,
      ...kvReader(BUCKET.signals),
      `${js}.INFO`,
      `shrooms.signal.${m}.>`,
      `shrooms.notify.${m}.>`,
      // No request to any bridge (deliver, cancel, update, control): only the gateway sends them,
      // past its rules; a session's own task_update stays inside its bridge, its owner's CLI and
      // the dashboard go through the gateway.
    ],
    deny: storeDeny(),
    subscribe: [`shrooms.bridge.${m}.>`, `${bridgeInbox(machine)}.>`, ...srv(SERVICE.bridge)],
  };
}

/**
 * The user of one session's bridge, where the deployment knows its sessions (`--session M/S`):
 * only that session's ledger entries, signal, notifications, deliveries and replies — least
 * privilege per session, not only per machine. Its bridge connects with inboxPrefix
 * `_INBOX_bridge.m.s` (subjects.bridgeInbox(machine, session)). `local`: M is the `--local` machine,
 * whose sessions are named without it (`session-S`, `$NATS_SESSION_<S>_PASSWORD`), as its
 * machine-wide user is `bridge`.
 */
export function sessionUser(agent, { local = false } = {}) {
  const slash = agent.indexOf('/');
  const machine = agent.slice(0, slash);
  const session = agent.slice(slash + 1);
  if (slash <= 0 || !NAME_RE.test(machine) || !NAME_RE.test(session) || agent.length > 129)
    throw new Error(`not MACHINE/SESSION: ${JSON.stringify(agent)}`);
  const m = encodeToken(machine);
  const ms = `${m}.${encodeToken(session)}`;
  const upper = (x) => x.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  return {
    user: local ? `session-${session}` : `bridge-${machine}-${session}`,
    password: local ? `NATS_SESSION_${upper(session)}_PASSWORD` : `NATS_BRIDGE_${upper(machine)}_${upper(session)}_PASSWORD`,
    why: `the bridge of session ${machine}/${session} only; connect with inboxPrefix "${bridgeInbox(machine)}.${encodeToken(session)}"`,
    publish: [
      ...kvScoped(BUCKET.tasks, `${ms}.>`),
      `$KV.${BUCKET.tasks}._health.${m}.>`,
      `$KV.${BUCKET.signals}.${ms}`,
      ...kvReader(BUCKET.signals),
      `${js}.INFO`,
      `shrooms.signal.${ms}`,
      `shrooms.notify.${ms}.>`,
    ],
    deny: storeDeny(),
    subscribe: [`shrooms.bridge.${ms}.>`, `${bridgeInbox(machine)}.${encodeToken(session)}.>`, ...srv(SERVICE.bridge)],
  };
}

export const adminUser = () => ({
  user: 'admin',
  password: 'NATS_ADMIN_PASSWORD',
  why: 'operators (nats CLI): everything',
  publish: null,
  subscribe: null,
});

// ---- the file ------------------------------------------------------------------------------------

const q = (s) => JSON.stringify(s);

function renderUser(u) {
  const lines = [`    # ${u.why}`, `    {`, `      user: ${q(u.user)}`, `      password: $${u.password}`];
  if (u.publish) {
    lines.push('      permissions: {');
    if (u.deny?.length)
      lines.push(
        '        publish: {',
        '          allow: [',
        ...u.publish.map((s) => `            ${q(s)}`),
        '          ]',
        '          deny: [',
        ...u.deny.map((s) => `            ${q(s)}`),
        '          ]',
        '        }',
      );
    else lines.push('        publish: { allow: [', ...u.publish.map((s) => `          ${q(s)}`), '        ] }');
    lines.push('        subscribe: { allow: [', ...u.subscribe.map((s) => `          ${q(s)}`), '        ] }');
    lines.push('        # One reply to each request this user received (service endpoints, $SRV pings), within');
    lines.push(`        # ${REPLY_WINDOW}: the requests' default timeout. nats-server 2.9 keeps every reply-to subject`);
    lines.push('        # it delivers to this user for that long and, past 4,096 of them, walks all at each message.');
    lines.push(`        allow_responses: { max: 1, expires: "${REPLY_WINDOW}" }`);
    lines.push('      }');
  }
  lines.push('    }');
  return lines.join('\n');
}

export function renderPermissions({ local, machines = [], sessions = [], admin = true, command }) {
  const bridges = [
    ...(local ? [bridgeUser(local, { local: true })] : []),
    ...machines.map((m) => bridgeUser(m)),
    ...sessions.map((a) => sessionUser(a, { local: local !== undefined && a.slice(0, a.indexOf('/')) === local })),
  ];
  const users = [...serviceUsers(), ...bridges, ...(admin ? [adminUser()] : [])];
  const seen = new Map();
  for (const u of users) {
    for (const key of [u.user, u.password]) {
      if (seen.has(key)) throw new Error(`two users would share ${key} (${seen.get(key)} and ${u.user}); rename a machine`);
      seen.set(key, u.user);
    }
  }
  const width = Math.max(...users.map((u) => u.user.length));
  return [
    '# NATS users and least-privilege permissions of the shrooms mesh (included by nats.conf).',
    `# GENERATED by deploy/nats/gen-permissions.mjs — do not edit; regenerate with:`,
    `#   node deploy/nats/gen-permissions.mjs ${command}`,
    '#',
    "# Each password comes from the NATS server's environment:",
    ...users.map((u) => `#   ${u.user.padEnd(width)}  $${u.password}`),
    '',
    'authorization {',
    '  users: [',
    users.map(renderUser).join('\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
}

// ---- command line --------------------------------------------------------------------------------

function main() {
  const { values } = parseArgs({
    options: {
      local: { type: 'string' },
      machine: { type: 'string', multiple: true, default: [] },
      session: { type: 'string', multiple: true, default: [] },
      'no-admin': { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const command = [
    ...(values.local ? [`--local ${values.local}`] : []),
    ...values.machine.map((m) => `--machine ${m}`),
    ...values.session.map((a) => `--session ${a}`),
    ...(values['no-admin'] ? ['--no-admin'] : []),
    ...(values.out ? [`--out ${values.out}`] : []),
  ].join(' ');
  const text = renderPermissions({
    local: values.local,
    machines: values.machine,
    sessions: values.session,
    admin: !values['no-admin'],
    command,
  });
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`gen-permissions: ${err.message}\n`);
    process.exit(2);
  }
}
