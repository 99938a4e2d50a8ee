/**
 * For the bridge's unit tests: the rooms' shared state (`Core`) around a view and a ledger, with
 * stand-ins for what no test here runs (spans, log, presence): session `session` of machine `box`,
 * room for 10 waiting and 10 open tasks, not stopping. `extra` adds or replaces fields (a harness,
 * settings, a ledger that holds its writes).
 */
import type { Ledger } from '@shrooms/ledger';
import type { Core } from '../bridge/core.js';
import { WorkerLines } from '../bridge/lines.js';
import { Serial } from '../bridge/serial.js';
import type { SessionView } from '../bridge/view.js';

export function standInCore(
  session: string,
  view: SessionView,
  ledger: Ledger,
  extra: { config?: Record<string, unknown> } & Record<string, unknown> = {},
): Core {
  const { config, ...rest } = extra;
  return {
    machine: 'box',
    session,
    view,
    ledger,
    config: { LIMIT_QUEUE_LENGTH: 10, LIMIT_OPEN_TASKS: 10, ...config },
    spans: { begin: () => undefined, taken: () => {}, discard: () => {} },
    activity: { lines: new WorkerLines() },
    serial: new Serial(),
    harnessIdle: () => false,
    stopping: () => false,
    changed: () => {},
    log: { warn: () => {}, info: () => {}, debug: () => {} },
    ...rest,
  } as unknown as Core;
}
