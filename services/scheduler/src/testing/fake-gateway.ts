/**
 * A stand-in for the gateways and the ledger in unit tests: a task per (machine, session, message
 * id), a resend of the same id is the same task — the property exactly-once rests on.
 */
import type { SendMessage, SendResult, OutgoingMessage } from '../deliver/send.js';

export class FakeGateways {
  /** Tasks by `machine/session:messageId`. */
  readonly tasks = new Map<string, OutgoingMessage>();
  /** Every send, resends included. */
  readonly sends: OutgoingMessage[] = [];
  /** Answer the next sends with this instead (then back to normal). */
  failNext: SendResult[] = [];
  /** While set, sends hang (a replica that dies mid-send); `recordFirst` = the gateway got it first. */
  hang: { recordFirst: boolean } | null = null;
  /** Sends that hung, in order. */
  readonly hung: OutgoingMessage[] = [];
  private hangWaiters: (() => void)[] = [];

  readonly send: SendMessage = async (_url, msg) => {
    this.sends.push(msg);
    const injected = this.failNext.shift();
    if (injected) return injected;
    if (this.hang) {
      if (this.hang.recordFirst) this.record(msg);
      this.hung.push(msg);
      for (const wake of this.hangWaiters.splice(0)) wake();
      return new Promise<SendResult>(() => {});
    }
    return { outcome: 'sent', taskId: this.record(msg) };
  };

  /** Resolves when the next send hangs. */
  nextHang(): Promise<void> {
    return new Promise((resolve) => this.hangWaiters.push(resolve));
  }

  private record(msg: OutgoingMessage): string {
    const key = `${msg.machine}/${msg.session}:${msg.messageId}`;
    if (!this.tasks.has(key)) this.tasks.set(key, msg);
    return `${msg.session}:${msg.messageId}`;
  }

  tasksOf(scheduleId: string): OutgoingMessage[] {
    return [...this.tasks.values()].filter((m) => m.metadata['shrooms/schedule'] === scheduleId);
  }
}
