/**
 * Shared setup of the harness tests: temp folders, the options an adapter gets, and a recorder of
 * everything the adapter tells the bridge.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@shrooms/runtime';
import type { HarnessEvents, HarnessOptions, HarnessState, PermissionRequest } from '@shrooms/session-bridge';

export interface Recorded {
  states: HarnessState[];
  texts: string[];
  permissions: PermissionRequest[];
  exits: (number | null)[];
  background: number[];
  updates: { taskId: string; status: string; text: string }[];
}

export interface Recorder {
  events: HarnessEvents;
  seen: Recorded;
  /** Resolves once `check` holds for what was recorded (polled on every event). */
  until(check: (seen: Recorded) => boolean, timeoutMs?: number): Promise<void>;
}

export function recorder(): Recorder {
  const seen: Recorded = { states: [], texts: [], permissions: [], exits: [], background: [], updates: [] };
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  return {
    seen,
    events: {
      state: (s) => (seen.states.push(s), notify()),
      text: (l) => (seen.texts.push(l), notify()),
      permission: (p) => (seen.permissions.push(p), notify()),
      exit: (c) => (seen.exits.push(c), notify()),
      backgroundJobs: (n) => (seen.background.push(n), notify()),
    },
    until(check, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const tick = () => {
          if (!check(seen)) return;
          clearTimeout(timer);
          listeners.delete(tick);
          resolve();
        };
        const timer = setTimeout(() => {
          listeners.delete(tick);
          reject(new Error(`condition not met within ${timeoutMs} ms; seen: ${JSON.stringify(seen).slice(0, 2000)}`));
        }, timeoutMs);
        listeners.add(tick);
        tick();
      });
    },
  };
}

export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `shrooms-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export const log = createLogger('harness-test', process.env.LOG_LEVEL ?? 'error');

export function harnessOptions(o: {
  stateDir: string;
  cwd: string;
  mcpUrl: string;
  env: Record<string, string>;
  events: HarnessEvents;
  autoApprove?: boolean;
  updates?: Recorded['updates'];
  cancelGraceMs?: number;
}): HarnessOptions {
  return {
    machine: 'testbox',
    session: 'harness-test',
    cwd: o.cwd,
    stateDir: o.stateDir,
    systemNote: 'You are testbox/harness-test on the shrooms mesh. NOTE-MARKER-7f3a',
    mcpUrl: o.mcpUrl,
    autoApprove: o.autoApprove ?? false,
    env: o.env,
    log,
    events: o.events,
    tools: { taskUpdate: async (taskId, status, text) => void o.updates?.push({ taskId, status, text }) },
    cancelGraceMs: o.cancelGraceMs ?? 15_000,
  };
}

/** The text of every user prompt the model saw in a request (history check after a resume). */
export function promptsOf(body: Record<string, unknown>): string {
  return JSON.stringify(body.messages ?? []);
}
