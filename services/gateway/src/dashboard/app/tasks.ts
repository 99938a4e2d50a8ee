/** The task list: filters in the hash, pages by cursor, rows replaced in place as they change. */
import type { TasksPage } from '../wire.js';
import { h } from './dom.js';
import { load, loading, render, show } from './render.js';
import { filterOf, tasksHash, type Route } from './route.js';
import { taskRow } from './rows.js';
import { qs } from './server.js';
import { FILTERS, PAGE, S, type Filter } from './state.js';

export function tasksView(r: Route, quiet: boolean): Promise<void> {
  const f = filterOf(r);
  const cursor = S.cursors.length ? S.cursors[S.cursors.length - 1] : '';
  const placeholder = !quiet || !S.list ? h('div', null, [filtersBar(f, null), loading()]) : null;
  return load<TasksPage>(
    `/dashboard/api/tasks${qs({ agent: f.agent, state: f.state, q: f.q, cursor, limit: PAGE })}`,
    placeholder,
    (page) => {
      S.list = { filter: f, rows: page.rows, next: page.next, total: page.total };
      paintTasks();
    },
  );
}

/** Goes to the first page of the list under another filter. */
function refilter(f: Filter): void {
  S.cursors = [];
  location.hash = tasksHash(f);
}

function filtersBar(f: Filter, total: number | null): HTMLElement {
  const agents = new Set<string>();
  for (const s of S.sessions) agents.add(s.agent);
  for (const a of S.agents) agents.add(a.agent);
  if (f.agent) agents.add(f.agent);
  const sel: HTMLSelectElement = h(
    'select',
    { 'aria-label': 'session', id: 'f-agent', onchange: () => refilter({ ...f, agent: sel.value }) },
    [
      h('option', { value: '', text: 'All sessions' }),
      [...agents].sort().map((a) => h('option', { value: a, selected: a === f.agent, text: a })),
    ],
  );
  const st: HTMLSelectElement = h(
    'select',
    { 'aria-label': 'state', id: 'f-state', onchange: () => refilter({ ...f, state: st.value }) },
    FILTERS.map(([value, text]) => h('option', { value, selected: value === f.state, text })),
  );
  let qTimer: ReturnType<typeof setTimeout> | undefined;
  const q: HTMLInputElement = h('input', {
    type: 'search',
    placeholder: 'Search id, text, asker',
    value: f.q,
    'aria-label': 'search',
    oninput: () => {
      clearTimeout(qTimer);
      qTimer = setTimeout(() => refilter({ ...f, q: q.value }), 350);
    },
  });
  return h('div', { class: 'filters' }, [
    sel,
    st,
    q,
    total === null ? null : h('span', { class: 'total', id: 'total', text: total + (total === 1 ? ' task' : ' tasks') }),
  ]);
}

export function paintTasks(): void {
  const L = S.list;
  if (!L) return;
  S.rowEls = new Map();
  const rows = h('div', { class: 'rows', id: 'rows' });
  for (const r of L.rows) {
    const el = taskRow(r);
    S.rowEls.set(r.key, el);
    rows.appendChild(el);
  }
  const next = L.next;
  const pager = h('div', { class: 'pager' }, [
    S.cursors.length
      ? h('button', {
          type: 'button',
          text: '‹ Newer',
          onclick: () => {
            S.cursors.pop();
            void render();
          },
        })
      : h('span'),
    next
      ? h('button', {
          type: 'button',
          text: 'Older ›',
          onclick: () => {
            S.cursors.push(next);
            void render();
          },
        })
      : h('span'),
  ]);
  const focus = document.activeElement instanceof HTMLInputElement && document.activeElement.type === 'search';
  show(h('div', null, [filtersBar(L.filter, L.total), L.rows.length ? rows : h('p', { class: 'empty', text: 'No tasks match.' }), pager]));
  if (focus) {
    const input = document.querySelector<HTMLInputElement>('input[type=search]');
    if (input) {
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    }
  }
}
