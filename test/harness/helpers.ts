/**
 * Shared setup of the harness tests: the options an adapter gets, and a recorder of
 * everything the adapter tells the bridge.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '@shrooms/runtime';
import { eventually, rpc, useTool } from '@shrooms/testing';
import { expect } from 'vitest';
import {
  harnessBaseEnv,
  type HarnessEvents,
  type HarnessOptions,
  type HarnessState,
  type PermissionRequest,
} from '@shrooms/session-bridge';

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
    baseEnv: harnessBaseEnv(process.env),
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

/** A guard policy that lets agents give these sessions tasks (pi runs tools without asking). */
export async function permissivePolicy(dir: string): Promise<string> {
  const policy = join(dir, 'policy.yaml');
  await writeFile(policy, 'default: { devices: ["*"], agents: ["*"], agentTasks: true }\n');
  return policy;
}

/** The A2A calls the harness tests make on a mesh's sessions (the gateway URL is read when called). */
export function sessionRpc(gatewayUrl: () => string) {
  const url = (session: string) => `${gatewayUrl()}/a2a/${session}`;
  const ask = (session: string, id: string, text: string, extra: Record<string, unknown> = {}, immediate = true) =>
    rpc(url(session), 'SendMessage', {
      message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...extra },
      ...(immediate ? { configuration: { returnImmediately: true } } : {}),
    });
  const get = async (session: string, id: string) => (await rpc(url(session), 'GetTask', { id })).result;
  const until = (session: string, id: string, check: (t: any) => boolean, timeoutMs = 120_000) =>
    eventually(
      async () => {
        const t = await get(session, id);
        return check(t) ? t : undefined;
      },
      timeoutMs,
      200,
    );
  return { url, ask, get, until };
}

/** The fake model's directive for a worker finishing its task. */
export const done = (text: string) => useTool('task_update', { task: '$TASK', status: 'done', text });

/** The blocked-then-answered scenario every harness passes: blocked with a question, answered by taskId, then done. */
export async function blockedThenAnswered(ask: ReturnType<typeof sessionRpc>['ask'], session: string): Promise<void> {
  const r = await ask(
    session,
    `${session}-blocked`,
    useTool('task_update', { task: '$TASK', status: 'blocked', text: 'which branch?' }),
    {},
    false,
  );
  expect(r.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  expect(r.result.task.status.message.parts[0].text).toBe('which branch?');
  const a = await ask(session, `${session}-answer`, done('main it is'), { taskId: r.result.task.id }, false);
  expect(a.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(a.result.task.artifacts[0].parts[0].text).toBe('main it is');
}
