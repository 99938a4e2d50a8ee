/** One task opened: its facts, its actions, what it said, its history, artifacts and metadata. */
import type { TaskAnswer } from '../wire.js';
import { taskActions } from './actions.js';
import { ageEl, chainHref, h, link, pill, taskHref, type Kid } from './dom.js';
import { load, loading, show } from './render.js';
import type { Route } from './route.js';
import { taskBadges, taskRow } from './rows.js';
import { qs } from './server.js';
import { S } from './state.js';
import { when } from './time.js';

export function taskView(r: Route, quiet: boolean): Promise<void> {
  return load<TaskAnswer>(`/dashboard/api/task${qs({ key: r.arg })}`, quiet ? null : loading(), (d) => {
    S.shown = { view: 'task', data: d };
    show(taskDetail(d));
  });
}

function fact(label: string, value: Kid): HTMLElement | null {
  if (value === undefined || value === null || value === '' || value === false) return null;
  return h('div', null, [h('dt', { text: label }), h('dd', null, value)]);
}

function taskDetail(d: TaskAnswer): HTMLElement {
  const t = d.detail;
  const r = t.row;
  const parts: Kid[] = [
    h('div', { class: 'detail-head' }, [
      pill(r.state),
      h('h2', { text: r.name, 'data-task': r.name, 'data-state': r.state }),
      taskBadges(r),
    ]),
    h('dl', { class: 'facts' }, [
      fact('to', r.to),
      fact('from', r.from),
      fact(
        'asked by',
        r.origin === 'schedule' ? `schedule ${r.schedule || ''}` : r.origin === 'agent' ? 'an agent (a claimed session)' : 'a person',
      ),
      fact('asked', [when(r.createdAt), ' (', ageEl(r.createdAt), ' ago)']),
      fact('last change', when(r.statusAt)),
      fact('reminders', r.nudges ? String(r.nudges) : '0'),
      fact('stalled', r.stalled ? when(r.stalled) : null),
      fact('parent', r.parent ? (r.parentKey ? link(taskHref(r.parentKey), r.parent) : r.parent) : null),
      fact('chain', link(chainHref(r.key), d.chainSize > 1 ? `show the chain (${d.chainSize} tasks)` : 'show as a tree')),
      fact('context', h('span', { class: 'mono', text: t.contextId })),
    ]),
    taskActions(r),
  ];
  if (t.status.text)
    parts.push(h('h2', { text: r.open ? 'Status' : 'Result' }), h('div', { class: 'msg agent' }, h('pre', { text: t.status.text })));
  if (r.lastWorkerLine && r.lastWorkerLine !== (t.status.text || '').replace(/\s+/g, ' ').trim())
    parts.push(h('h2', { text: 'Last worker line' }), h('div', { class: 'msg' }, h('pre', { text: r.lastWorkerLine })));
  if (d.children && d.children.length) {
    parts.push(h('h2', { text: 'Asked from inside this task' }), h('div', { class: 'rows' }, d.children.map(taskRow)));
  }
  parts.push(h('h2', { text: 'History' }));
  if (t.historyOmitted) parts.push(h('p', { class: 'empty', text: `${t.historyOmitted} older messages not shown` }));
  parts.push(
    h(
      'div',
      { class: 'msgs' },
      t.history.map((m) =>
        h('div', { class: `msg ${m.role}` }, [
          h('div', { class: 'meta' }, [
            h('span', { text: m.role }),
            m.at ? h('span', { text: when(m.at) }) : null,
            h('span', { class: 'mono', text: m.messageId }),
          ]),
          h('pre', { text: m.text }),
        ]),
      ),
    ),
  );
  if (t.artifacts.length) {
    parts.push(h('h2', { text: 'Artifacts' }));
    for (const a of t.artifacts)
      parts.push(h('div', { class: 'msg' }, [h('div', { class: 'meta', text: a.name }), h('pre', { text: a.text })]));
  }
  parts.push(
    h('details', { class: 'md' }, [
      h('summary', { text: 'Metadata' }),
      h(
        'table',
        { class: 'kv' },
        h(
          'tbody',
          null,
          Object.keys(t.metadata)
            .sort()
            .map((k) => h('tr', null, [h('td', { text: k }), h('td', { class: 'mono', text: t.metadata[k] })])),
        ),
      ),
    ]),
  );
  return h('div', { 'data-detail': r.key }, parts);
}
