/**
 * The loop guard's window of this machine's own device for each local session: the owner sees the
 * count, the limit and when it frees, and may empty it (owner only: the control rule).
 */
import type { AgentView, GuardAnswer, GuardWindowView } from '../wire.js';
import { onceButton } from './actions.js';
import { h, toast } from './dom.js';
import { getJSON, postJSON, qs } from './server.js';
import { S } from './state.js';
import { ago } from './time.js';

/** What the page last knew of a session's window (or why it could not), and when. */
interface Known {
  w?: GuardWindowView | undefined;
  err?: string | undefined;
  at: number;
}

const guards = new Map<string, Known>();

/** A window read less than this long ago is shown as it is (ms). */
const FRESH_MS = 5000;

function guardText(g: Known | undefined): string {
  if (!g) return 'loop guard: …';
  if (g.err) return `loop guard: ${g.err}`;
  const w = g.w;
  if (!w) return 'loop guard: …';
  const t = `loop guard: ${w.count} of ${w.limit} new tasks from ${w.device} within ${ago(w.windowMs)}`;
  if (w.retryAfterMs > 0) return `${t} · full: the next is admitted in ${ago(w.retryAfterMs)}`;
  if (w.count > 0 && w.oldestAt) return `${t} · the oldest leaves it in ${ago(Date.parse(w.oldestAt) + w.windowMs - Date.now())}`;
  return t;
}

function paintGuard(agent: string): void {
  const g = guards.get(agent);
  for (const el of document.querySelectorAll<HTMLElement>('[data-guard]')) {
    if (el.getAttribute('data-guard') !== agent) continue;
    if (el.firstChild) el.firstChild.textContent = guardText(g);
    if (g?.w) el.setAttribute('data-count', String(g.w.count));
    const b = el.querySelector('button');
    if (b) {
      b.hidden = !g?.w;
      b.disabled = false;
    }
  }
}

/** Empties a device's window (default: this viewer's own) of a session; never rejects (it says why). */
export async function resetGuard(agent: string, device?: string, done?: () => void): Promise<void> {
  let res: GuardAnswer;
  try {
    res = await postJSON<GuardAnswer>('/dashboard/api/guard/reset', device ? { agent, device } : { agent });
  } catch (err) {
    toast((err as Error).message, true);
    paintGuard(agent);
    return;
  }
  if (!device || device === S.viewer.device) guards.set(agent, { w: res.window, at: Date.now() });
  paintGuard(agent);
  toast(`Emptied the loop-guard window of ${res.window.device} for ${agent}`);
  if (done) done();
}

export function guardLine(a: AgentView): HTMLElement {
  const reset = onceButton(
    {
      'data-action': 'reset-guard',
      hidden: true,
      text: 'Reset window',
      title: `Empty the window: new tasks from ${S.viewer.device} are admitted again`,
    },
    () => resetGuard(a.agent),
  );
  return h('div', { class: 'row guard', 'data-guard': a.agent }, [
    h('span', { class: 'fresh', text: guardText(guards.get(a.agent)) }),
    reset,
  ]);
}

/** Reads the window of each local session (the owner's page only), unless it is fresh. */
export function loadGuards(): void {
  for (const a of S.agents) {
    if (!a.local || !S.viewer.self) continue;
    const g = guards.get(a.agent);
    if (g && Date.now() - g.at < FRESH_MS) {
      paintGuard(a.agent);
      continue;
    }
    guards.set(a.agent, { w: g?.w, err: g?.err, at: Date.now() });
    getJSON<GuardAnswer>(`/dashboard/api/guard${qs({ agent: a.agent })}`).then(
      (d) => {
        guards.set(a.agent, { w: d.window, at: Date.now() });
        paintGuard(a.agent);
      },
      (err: Error) => {
        guards.set(a.agent, { err: err.message, at: Date.now() });
        paintGuard(a.agent);
      },
    );
  }
}
