/** `schedule create | list | cancel`: tasks at a time, through the scheduler. */
import { describeSchedule } from '@shrooms/client';
import { formatWallClock } from '@shrooms/protocol';
import { makeClient, output, parse, run, UsageError } from './io.js';

export const SCHEDULE_HELP = `usage: shrooms-agent a2a schedule create --to AGENT[,AGENT…] (--at TIME | --in DELAY) [--zone ZONE] [--repeat RULE] [--reply] [--id ID] TEXT...
       shrooms-agent a2a schedule list [--all] [--mine] [--to AGENT] [--json]
       shrooms-agent a2a schedule cancel ID [--json]

Tasks at a time, once or repeating; each occurrence becomes an ordinary task.
  --at      08:00 (the next 08:00: today if still ahead, else tomorrow), 2026-10-12T08:00, both read
            in --zone (default: this machine's zone, TZ); 2026-10-12T08:00[Europe/Berlin] or an
            instant, 2026-10-12T06:00:00Z
  --zone    the IANA zone of a local --at and of the repeats (Europe/Berlin, America/New_York, UTC)
  --in      instead of --at, a delay from now: 90s, 10m, 2h, 1h30m, 3d (at most a year)
  --repeat  daily | weekly:mon,fri | monthly:31 | yearly | every 15m … with ;until=… or ;count=N
  --reply   send each result back to you (SHROOMS_AGENT_SESSION)
Times are shown as the wall time of the schedule's zone (--json: the instant, UTC).
The scheduler is asked through this machine's gateway (SHROOMS_GATEWAY_URL); when none runs the
answer is "the scheduler is not running" (exit 1).
`;

export function scheduleCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'create') return run('schedule create', SCHEDULE_HELP, rest, () => create(rest));
  if (sub === 'list') return run('schedule list', SCHEDULE_HELP, rest, () => list(rest));
  if (sub === 'cancel') return run('schedule cancel', SCHEDULE_HELP, rest, () => cancel(rest));
  return run('schedule', SCHEDULE_HELP, args, async () => {
    throw new UsageError(
      sub ? `unknown schedule command ${JSON.stringify(sub)}; use create, list or cancel` : 'say create, list or cancel',
    );
  });
}

async function create(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    to: { type: 'string', multiple: true },
    at: { type: 'string' },
    in: { type: 'string' },
    zone: { type: 'string' },
    repeat: { type: 'string' },
    reply: { type: 'boolean' },
    id: { type: 'string' },
  });
  const to = (values.to ?? [])
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter(Boolean);
  if (to.length === 0) throw new UsageError('say who gets the task: --to MACHINE/SESSION');
  if (values.at === undefined && values.in === undefined) throw new UsageError('say when: --at TIME or --in DELAY');
  if (values.at !== undefined && values.in !== undefined) throw new UsageError('say when with --at or --in, not both');
  const text = positionals.join(' ');
  if (!text) throw new UsageError('the task needs text');
  const out = output(values.json === true);
  const client = makeClient(values.gateway);
  try {
    const r = await client.createSchedule({
      to,
      text,
      at: values.at,
      in: values.in,
      zone: values.zone,
      repeat: values.repeat,
      replyTo: values.reply === true,
      id: values.id,
    });
    out.data(r);
    out.say(`${r.created ? 'scheduled' : 'already scheduled'}: ${describeSchedule(r.schedule, { when: shownAt })}`);
    return 0;
  } finally {
    await client.close();
  }
}

async function list(args: string[]): Promise<number> {
  const { values } = parse(args, { all: { type: 'boolean' }, mine: { type: 'boolean' }, to: { type: 'string' } });
  const out = output(values.json === true);
  const client = makeClient(values.gateway);
  try {
    const r = await client.listSchedules({ all: values.all, mine: values.mine, ...(values.to ? { recipient: values.to } : {}) });
    out.data(r);
    out.say(r.schedules.length ? r.schedules.map((s) => describeSchedule(s, { when: shownAt })).join('\n') : 'no schedules');
    return 0;
  } finally {
    await client.close();
  }
}

async function cancel(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {});
  const id = positionals[0];
  if (!id) throw new UsageError('say which schedule: cancel ID');
  const out = output(values.json === true);
  const client = makeClient(values.gateway);
  try {
    const schedule = await client.cancelSchedule(id);
    out.data({ schedule });
    out.say(`canceled: ${describeSchedule(schedule, { when: shownAt })}`);
    return 0;
  } finally {
    await client.close();
  }
}

/** An occurrence as a person reads it: its wall time in the schedule's zone (`Tue 8 Dec 2026 08:00`). */
function shownAt(iso: string, zone: string): string {
  try {
    return formatWallClock(iso, zone);
  } catch {
    return iso; // a zone this Node does not know: the instant as the scheduler wrote it
  }
}
