/**
 * What the owner (and the asker, for Cancel) may do from the page. The buttons appear only where
 * the gateway would allow the act (the rules are the server's: authz/rules.ts); a destructive one
 * takes two clicks.
 */
import type { ActionAnswer, TaskRowView } from '../wire.js';
import { h, toast } from './dom.js';
import { onRows } from './live.js';
import { postJSON } from './server.js';
import { S } from './state.js';

/** Release, reject and controls: this machine itself, on its own open tasks. */
export const canAct = (r: TaskRowView): boolean => S.viewer.self && r.machine === S.machine && r.open;

/** The cancel rule: the owner's machine, or the device that asked for the task (as over A2A). */
export const canCancel = (r: TaskRowView): boolean => r.machine === S.machine && r.open && (S.viewer.self || r.device === S.viewer.device);

/** A button that asks "Confirm …" on the first click and runs on the second (within 5 s). */
export function confirmButton(label: string, confirmLabel: string, cls: string, run: () => Promise<unknown>): HTMLButtonElement {
  let armed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const b = h('button', { class: cls, type: 'button', text: label });
  const disarm = () => {
    if (!armed) return;
    armed = false;
    S.armed--;
    b.textContent = label;
    b.classList.remove('confirm');
  };
  b.addEventListener('click', () => {
    if (!armed) {
      armed = true;
      S.armed++;
      b.textContent = confirmLabel;
      b.classList.add('confirm');
      timer = setTimeout(disarm, 5000);
      return;
    }
    clearTimeout(timer);
    b.disabled = true;
    const done = () => {
      b.disabled = false;
      disarm();
    };
    run().then(done, done);
  });
  return b;
}

/** Posts an action; says what it did (or why not), and shows the row it answers at once. */
export async function act(path: string, body: unknown, done: string): Promise<ActionAnswer> {
  let res: ActionAnswer;
  try {
    res = await postJSON<ActionAnswer>(path, body);
  } catch (err) {
    toast((err as Error).message, true);
    throw err;
  }
  toast(done);
  if (res?.row) onRows([res.row]);
  return res;
}

/** A button that disables itself while `run` runs, and again allows a click when it failed. */
export function onceButton(
  props: { text: string; title?: string; 'data-action': string; hidden?: boolean; class?: string },
  run: () => Promise<unknown>,
): HTMLButtonElement {
  const b: HTMLButtonElement = h('button', {
    type: 'button',
    ...props,
    onclick: () => {
      b.disabled = true;
      run().catch(() => (b.disabled = false));
    },
  });
  return b;
}

export function taskActions(r: TaskRowView): HTMLElement | null {
  if (!canCancel(r)) return null;
  const out: HTMLButtonElement[] = [];
  if (r.held && canAct(r)) {
    out.push(
      onceButton({ class: 'go', text: 'Release', 'data-action': 'release' }, () =>
        act('/dashboard/api/tasks/release', { key: r.key }, `Released ${r.name}: it runs now`),
      ),
      confirmButton('Reject', 'Confirm reject', 'danger', () => act('/dashboard/api/tasks/reject', { key: r.key }, `Rejected ${r.name}`)),
    );
  }
  const cancel = confirmButton('Cancel task', 'Confirm cancel', 'danger', () =>
    act('/dashboard/api/tasks/cancel', { key: r.key }, `Canceled ${r.name}`),
  );
  cancel.setAttribute('data-action', 'cancel');
  out.push(cancel);
  return h('div', { class: 'actions' }, out);
}
