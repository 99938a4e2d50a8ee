/**
 * The `tck` harness: the system under test the A2A TCK expects, as its reference SUTs behave —
 * by the prefix of the message id (the task id is SESSION:MESSAGE-ID):
 *
 *   tck-input-required      INPUT_REQUIRED until answered, then COMPLETED with the answer
 *   tck-auth-required       AUTH_REQUIRED until answered, then COMPLETED with the answer
 *   tck-reject-task         REJECTED
 *   tck-fail*, tck-task-failure  FAILED
 *   tck-delayed-complete, tck-stream-*  COMPLETED after TCK_DELAY_MS (default 1 000), so a stream
 *                           shows WORKING first
 *   tck-artifact-file-url   COMPLETED, the artifact holding a URL part (never fetched)
 *   tck-artifact-file       COMPLETED, the artifact holding a file part (`output.txt`, "tck")
 *   tck-artifact-data       COMPLETED, the artifact holding a data part
 *   anything else           COMPLETED with its text (tck-complete-task, tck-artifact-text)
 *
 * `tck-message-response` (a bare Message instead of a Task) cannot be: every message to a session
 * is a task. Like echo, no model.
 */
import type { Part } from '@shrooms/protocol';
import { EchoHarness, type Directive } from './echo.js';
import type { HarnessKind } from './types.js';

const idOf = (taskId?: string) => (taskId ? taskId.slice(taskId.indexOf(':') + 1) : '');
const isAnswer = (text: string) => / — more from /.test(text.split('\n')[0] ?? '');

/** Artifact parts by prefix, longest prefix first (`tck-artifact-file-url` before `tck-artifact-file`). */
const ARTIFACTS: [string, Part][] = [
  ['tck-artifact-file-url', { url: 'https://example.com/output.txt', mediaType: 'text/plain', filename: 'output.txt' }],
  ['tck-artifact-file', { raw: Buffer.from('tck').toString('base64'), mediaType: 'text/plain', filename: 'output.txt' }],
  ['tck-artifact-data', { data: { key: 'value', count: 42 } }],
];

export class TckHarness extends EchoHarness {
  override readonly kind: HarnessKind = 'tck';

  protected override delayMs(text: string, taskId?: string): number {
    const id = idOf(taskId);
    const slow = id.startsWith('tck-delayed-complete') || id.startsWith('tck-stream');
    return slow && !isAnswer(text) ? Number(this.opts.env.TCK_DELAY_MS ?? 1_000) : 0;
  }

  protected override directive(body: string, text: string, taskId?: string): Directive {
    const id = idOf(taskId);
    if (!isAnswer(text)) {
      if (id.startsWith('tck-input-required')) return { kind: 'blocked', text: 'more input is needed: send a message with this task id' };
      if (id.startsWith('tck-auth-required'))
        return { kind: 'auth_required', text: 'authorization is needed: send a message with this task id once it is given' };
    }
    if (id.startsWith('tck-reject-task')) return { kind: 'rejected', text: `rejected as asked (${id})` };
    if (id.startsWith('tck-fail') || id.startsWith('tck-task-failure')) return { kind: 'failed', text: `failed as asked (${id})` };
    const artifact = ARTIFACTS.find(([prefix]) => id.startsWith(prefix));
    if (artifact) return { kind: 'done', text: '', parts: [artifact[1]] };
    return { kind: 'done', text: body || 'done' };
  }
}
