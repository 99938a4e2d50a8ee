/**
 * The live feed (`/dashboard/events`, SSE): the overview on connect, then changed rows, counts,
 * agents, refusals and notes. A changed row is replaced in place where the list shows it; anything
 * else that shows it reloads, throttled (render.ts `reloadSoon`).
 */
import type { AgentView, DashboardEvents, Overview, TaskRowView } from '../wire.js';
import { agentsView } from './agents.js';
import { paintAttention } from './attention.js';
import { paintChrome, reloadSoon, render } from './render.js';
import { route } from './route.js';
import { matches } from './match.js';
import { taskRow } from './rows.js';
import { getJSON } from './server.js';
import { S } from './state.js';

/** Refusals and notes the page keeps (the gateway keeps as many). */
const KEEP = 100;
/** After the feed refused this page (too many dashboards open), try again after this long (ms). */
const RETRY_MS = 5000;

/** Rows that changed (from the feed, or an action's answer): the view on screen follows. */
export function onRows(rows: TaskRowView[]): void {
  const r = route();
  const shown = S.shown;
  if (r.view === 'tasks' && S.list) {
    const list = S.list;
    let reload = false;
    for (const row of rows) {
      const i = list.rows.findIndex((x) => x.key === row.key);
      if (i >= 0) {
        if (list.rows[i].v > row.v) continue;
        list.rows[i] = row;
        const old = S.rowEls.get(row.key);
        // A row whose two-step button is armed is not replaced under the pointer (the second
        // click would land on a detached button): the reload waits until it is disarmed.
        if (old?.parentNode && old.querySelector('button.confirm')) {
          reload = true;
        } else if (old?.parentNode) {
          const el = taskRow(row);
          old.parentNode.replaceChild(el, old);
          S.rowEls.set(row.key, el);
        }
        if (!matches(row, list.filter)) reload = true;
      } else if (matches(row, list.filter) && S.cursors.length === 0) {
        reload = true;
      }
    }
    if (reload) reloadSoon(300);
  } else if (r.view === 'task' && shown?.view === 'task') {
    const key = shown.data.detail.row.key;
    if (rows.some((x) => x.key === key || x.parentKey === key)) reloadSoon(200);
  } else if (r.view === 'chain' || r.view === 'chains') {
    const text = shown ? JSON.stringify(shown.data) : '';
    if (rows.some((x) => x.parentKey || text.includes(JSON.stringify(x.key)))) reloadSoon(400);
  } else if (r.view === 'attention') {
    const d = shown?.view === 'attention' ? shown.data : null;
    if (rows.some((x) => x.held || x.stalled || (d && [...d.held, ...d.stalled].some((y) => y.key === x.key)))) reloadSoon(300);
  }
}

function applyOverview(d: Overview): void {
  S.machine = d.machine;
  S.viewer = d.viewer;
  S.counts = d.counts;
  S.agents = d.agents;
  S.agentsAt = Date.now();
  S.sessions = d.sessions;
  S.refusals = d.refusals;
  S.notes = d.notes;
}

/** What the agents view shows of the agents: all but each signal's age, which tick() repaints. */
function agentsShape(agents: AgentView[]): string {
  return JSON.stringify(agents.map(({ ageMs: _age, ...shown }) => shown));
}

function keepNewest<T>(list: T[], item: T): void {
  list.unshift(item);
  list.length = Math.min(list.length, KEEP);
}

/**
 * Repaints the attention view, if it is on screen, for a new refusal or note — not under an armed
 * two-step button (Reject), which the repaint would replace between its two clicks: then the view
 * reloads once the button is disarmed.
 */
function repaintAttention(): void {
  if (route().view !== 'attention' || S.shown?.view !== 'attention') return;
  if (S.armed > 0) reloadSoon(1000);
  else paintAttention(S.shown.data);
}

let es: EventSource | undefined;
let retry: ReturnType<typeof setTimeout> | undefined;

function on<E extends keyof DashboardEvents>(source: EventSource, event: E, fn: (d: DashboardEvents[E]) => void): void {
  source.addEventListener(event, (e) => fn(JSON.parse((e as MessageEvent<string>).data) as DashboardEvents[E]));
}

/** Follows the feed; when it refuses this page, reads the overview once and tries again later. */
export function connect(): void {
  clearTimeout(retry);
  es?.close();
  const source = new EventSource('/dashboard/events');
  es = source;
  on(source, 'hello', (d) => {
    applyOverview(d);
    S.live = true;
    void render(true);
  });
  on(source, 'tasks', (d) => {
    S.counts = d.counts;
    paintChrome();
    onRows(d.rows);
  });
  on(source, 'resync', (d) => {
    S.counts = d.counts;
    paintChrome();
    if (route().view !== 'agents') reloadSoon(200);
  });
  on(source, 'agents', (d) => {
    const changed = agentsShape(d.agents) !== agentsShape(S.agents);
    S.agents = d.agents;
    S.agentsAt = Date.now();
    paintChrome();
    // A renewal alone is painted by tick(): rebuilding the cards for it, every few seconds, replaced
    // a button between a click's press and release, and the click was lost.
    if (changed && route().view === 'agents') void agentsView();
  });
  on(source, 'refusal', (d) => {
    keepNewest(S.refusals, d);
    paintChrome();
    repaintAttention();
  });
  on(source, 'note', (d) => {
    keepNewest(S.notes, d);
    repaintAttention();
  });
  source.onerror = () => {
    S.live = false;
    paintChrome();
    if (source.readyState === EventSource.CLOSED) {
      // Refused (e.g. too many dashboards open): read once, then try again a little later.
      getJSON<Overview>('/dashboard/api/overview').then(
        (d) => {
          applyOverview(d);
          void render(true);
        },
        () => {},
      );
      retry = setTimeout(connect, RETRY_MS);
    }
  };
}
