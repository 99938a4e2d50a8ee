/**
 * The frame around the views — header, tabs, the main area — and which view the hash asks for.
 * Each view loads what it shows and paints it into `#main`; `render` runs the view of the hash,
 * `reloadSoon` runs it again quietly (keeping what is on screen until the new data is in).
 */
import { agentsView } from './agents.js';
import { attentionView } from './attention.js';
import { chainView, chainsView } from './chains.js';
import { byId, h } from './dom.js';
import { route, type Route } from './route.js';
import { getJSON } from './server.js';
import { S } from './state.js';
import { taskView } from './task.js';
import { tasksView } from './tasks.js';

/** A view: load what it shows and paint it; `quiet` keeps the screen until the data is in. */
export type View = (r: Route, quiet: boolean) => Promise<void>;

function viewOf(name: string): View {
  switch (name) {
    case 'agents':
      return agentsView;
    case 'task':
      return taskView;
    case 'chains':
      return chainsView;
    case 'chain':
      return chainView;
    case 'attention':
      return attentionView;
    default:
      return tasksView;
  }
}

let loadSeq = 0;

/**
 * Loads what a view shows and paints it with `paint`, unless the viewer moved on meanwhile (another
 * render or load began: the newer one paints). `placeholder` is shown while it loads (none: what is on
 * screen stays); a failure shows in place of the view. `#main` is `aria-busy` while the latest load
 * is out.
 *
 * A quiet reload (no placeholder) that comes back while a two-step button is armed is not painted:
 * it would replace the button between its two clicks (the page's first reload, asked for when the
 * live feed connects, often answers just after a quick first click). It is asked again once the
 * button is disarmed; `reloadSoon` checks before it asks, this checks what was asked before.
 */
export async function load<T>(url: string, placeholder: Node | null, paint: (d: T) => void): Promise<void> {
  const seq = ++loadSeq;
  const main = byId('main');
  main.setAttribute('aria-busy', 'true');
  if (placeholder) show(placeholder);
  let d: T;
  try {
    d = await getJSON<T>(url);
  } catch (err) {
    if (seq === loadSeq) show(failed(err));
    return;
  } finally {
    if (seq === loadSeq) main.removeAttribute('aria-busy');
  }
  if (seq !== loadSeq) return;
  if (!placeholder && S.armed > 0) reloadSoon(1000);
  else paint(d);
}

export function show(node: Node): void {
  byId('main').replaceChildren(node);
}

export function loading(): HTMLElement {
  return h('p', { class: 'empty', text: 'Loading…' });
}

export function failed(err: unknown): HTMLElement {
  return h('p', { class: 'error', text: `Could not load: ${err instanceof Error ? err.message : String(err)}` });
}

export function paintChrome(): void {
  document.title = `shrooms · ${S.machine || 'dashboard'}`;
  byId('machine').textContent = S.machine ? `· ${S.machine}` : '';
  const live = byId('live');
  live.setAttribute('data-live', S.live ? '1' : '0');
  live.textContent = S.live ? 'live' : 'reconnecting…';
  const v = byId('viewer');
  v.className = `viewer${S.viewer.self ? ' owner' : ''}`;
  v.textContent = S.viewer.self ? `owner · ${S.viewer.device}` : `read-only · ${S.viewer.device}`;
  v.title = S.viewer.self
    ? 'You are on this machine: you may cancel, release, reject and stop reminders.'
    : 'Only this machine itself may act; you see everything.';
  const r = route().view;
  const c = S.counts ?? { total: 0, open: 0, held: 0, stalled: 0 };
  const attention = (c.held || 0) + (c.stalled || 0);
  const tabs: [string, string, string | null, boolean][] = [
    ['agents', 'Agents', String(S.agents.length), false],
    ['tasks', 'Tasks', `${c.open} / ${c.total}`, false],
    ['chains', 'Chains', null, false],
    ['attention', 'Attention', String(attention + S.refusals.length), attention > 0],
  ];
  byId('tabs').replaceChildren(
    ...tabs.map(([tab, label, count, hot]) => {
      const on = r === tab || (r === 'task' && tab === 'tasks') || (r === 'chain' && tab === 'chains');
      return h('a', { href: `#${tab}`, class: on ? 'on' : '', 'data-tab': tab, title: tab === 'tasks' ? 'open / all tasks' : null }, [
        label,
        count !== null ? h('span', { class: `count${hot ? ' hot' : ''}`, text: count }) : null,
      ]);
    }),
  );
}

/** Shows the view of the hash; a `quiet` render (a reload) keeps the scroll and what is shown. */
export function render(quiet = false): Promise<void> {
  const r = route();
  if (!quiet) {
    S.shown = null;
    window.scrollTo(0, 0);
  }
  paintChrome();
  // Every view supersedes a load in flight, Agents too (it paints what the feed keeps, loading nothing).
  loadSeq++;
  byId('main').removeAttribute('aria-busy');
  return viewOf(r.view)(r, quiet);
}

// A throttle, not a debounce: under a steady stream of changes the view still reloads a few
// times a second. It waits while a two-step button is armed, so a reload cannot eat the click.
let reloadTimer: ReturnType<typeof setTimeout> | null = null;

export function reloadSoon(ms = 300): void {
  if (reloadTimer) return;
  reloadTimer = setTimeout(() => {
    reloadTimer = null;
    if (S.armed > 0) reloadSoon(1000);
    else void render(true);
  }, ms);
}
