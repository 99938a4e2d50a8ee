/**
 * The `tck` harness: the system under test the A2A TCK expects, as its reference SUTs behave —
 * by the prefix of the message id (the task id is SESSION:MESSAGE-ID): `tck-input-required` asks
 * for input, then completes with the answer; `tck-delayed-complete` and `tck-stream-*` complete
 * after `TCK_DELAY_MS` (default 1 000) so a stream shows WORKING first; `tck-fail*` and
 * `tck-reject-task` fail (a worker cannot reject: FAILED is the nearest), `tck-auth-required`
 * asks for input (it cannot ask for auth); anything else (`tck-complete-task`, `tck-artifact-*`)
 * completes with its text. Like echo, no model.
 */
import { EchoHarness } from './echo.js';
import type { HarnessKind } from './types.js';

const idOf = (taskId?: string) => (taskId ? taskId.slice(taskId.indexOf(':') + 1) : '');
const isAnswer = (text: string) => / — more from /.test(text.split('\n')[0] ?? '');

export class TckHarness extends EchoHarness {
  override readonly kind: HarnessKind = 'tck';

  protected override delayMs(text: string, taskId?: string): number {
    const id = idOf(taskId);
    const slow = id.startsWith('tck-delayed-complete') || id.startsWith('tck-stream');
    return slow && !isAnswer(text) ? Number(this.opts.env.TCK_DELAY_MS ?? 1_000) : 0;
  }

  protected override directive(body: string, text: string, taskId?: string) {
    const id = idOf(taskId);
    const answered = isAnswer(text);
    if (!answered && (id.startsWith('tck-input-required') || id.startsWith('tck-auth-required')))
      return { kind: 'blocked' as const, text: 'more input is needed: send a message with this task id' };
    if (id.startsWith('tck-fail') || id.startsWith('tck-reject-task')) return { kind: 'failed' as const, text: `failed as asked (${id})` };
    return { kind: 'done' as const, text: body || 'done' };
  }
}
