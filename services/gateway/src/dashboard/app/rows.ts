/** A task as a row of the list, the attention view and a task's children. */
import type { TaskRowView } from '../wire.js';
import { taskActions } from './actions.js';
import { ageEl, badge, h, link, pill, taskHref } from './dom.js';
import { when } from './time.js';

export function taskBadges(r: TaskRowView): (HTMLElement | null)[] {
  return [
    r.held && r.open ? badge('held for the owner', 'held') : null,
    r.stalled && r.open ? badge('stalled', 'stalled', `stalled since ${when(r.stalled)}`) : null,
    r.queued && r.open ? badge('queued') : null,
    r.nudges ? badge(r.nudges + (r.nudges === 1 ? ' reminder' : ' reminders'), 'warn') : null,
    r.expired ? badge('expired') : null,
    r.acknowledged ? badge('acknowledged') : null,
    r.depth ? badge(`depth ${r.depth}`) : null,
  ];
}

export function taskRow(r: TaskRowView): HTMLElement {
  return h(
    'div',
    { class: `task st-${r.state}${r.held && r.open ? ' is-held' : ''}`, 'data-key': r.key, 'data-task': r.name, 'data-state': r.state },
    [
      h('div', { class: 'l1' }, [pill(r.state), link(taskHref(r.key), r.name, 'tid'), taskBadges(r), ageEl(r.createdAt)]),
      h('div', { class: 'who' }, [h('b', { text: r.from }), ' → ', h('b', { text: r.to })]),
      r.text ? h('div', { class: 'text', text: r.text }) : null,
      r.result ? h('div', { class: 'result', text: r.result }) : null,
      r.lastWorkerLine && r.lastWorkerLine !== r.result ? h('div', { class: 'worker', text: r.lastWorkerLine }) : null,
      taskActions(r),
    ],
  );
}
