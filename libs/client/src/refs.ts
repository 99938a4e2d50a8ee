/**
 * Names as people and models type them, made whole: `MACHINE/SESSION:ID` or `SESSION:ID` for a task
 * (bare = this machine), `MACHINE/SESSION` or `SESSION` for an agent.
 */
import { ShroomsError, formatTaskId, parseAgent, parseTaskName } from '@shrooms/protocol';

export interface AgentRef {
  machine: string;
  session: string;
  /** `MACHINE/SESSION`. */
  name: string;
}

export interface TaskRef extends AgentRef {
  messageId: string;
  /** The id the A2A surface shows: `SESSION:ID`. */
  id: string;
  /** The whole name: `MACHINE/SESSION:ID`. */
  task: string;
}

export function agentRef(machine: string, session: string): AgentRef {
  return { machine, session, name: `${machine}/${session}` };
}

export function taskRef(machine: string, session: string, messageId: string): TaskRef {
  const id = formatTaskId(session, messageId);
  return { ...agentRef(machine, session), messageId, id, task: `${machine}/${id}` };
}

/** Parses a task name; a name without a machine means `localMachine`. */
export function parseTaskRef(text: string, localMachine: string): TaskRef {
  const t = parseTaskName(text.trim());
  if (!t) {
    throw new ShroomsError(
      'INVALID_PARAMS',
      `${JSON.stringify(text.slice(0, 80))} is not a task name; write MACHINE/SESSION:ID or SESSION:ID`,
    );
  }
  return taskRef(t.machine ?? localMachine, t.session, t.messageId);
}

/** Checks the form of a task name without knowing this machine (for early usage errors). */
export function isTaskName(text: string): boolean {
  return parseTaskName(text.trim()) !== undefined;
}

/** Parses `MACHINE/SESSION` or `SESSION` (machine left open). */
export function parseAgentName(text: string): { machine?: string; session: string } {
  const a = parseAgent(text.trim());
  if (!a) {
    throw new ShroomsError(
      'INVALID_PARAMS',
      `${JSON.stringify(text.slice(0, 80))} is not an agent name; write MACHINE/SESSION or SESSION (letters, digits, . _ -)`,
    );
  }
  return a;
}

/** A fresh message id: `PREFIX-YYYYMMDDTHHMMSS-8hex` (spec §2's `cli-20261008T091502-3f9a1c2e`). */
export function newMessageId(prefix: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');
  const rand = globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 8);
  return `${prefix}-${stamp}-${rand}`;
}
