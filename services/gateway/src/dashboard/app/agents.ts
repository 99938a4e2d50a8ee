/** Sessions with a live signal, by machine (this one first), each with its signal fading between renewals. */
import type { AgentView } from '../wire.js';
import { act, onceButton } from './actions.js';
import { ageEl, badge, h, link, taskHref } from './dom.js';
import { guardLine, loadGuards } from './guard.js';
import { show } from './render.js';
import { tasksHash } from './route.js';
import { S } from './state.js';
import { ago } from './time.js';

/** Paints a signal bar for `now` (tick() repaints every `[data-signal]` each second). */
export function paintSignal(el: HTMLElement, a: AgentView, now: number): void {
  const age = a.ageMs + (now - S.agentsAt);
  const strength = Math.max(0, Math.min(1, 1 - age / a.ttlMs));
  const bar = el.firstChild as HTMLElement;
  bar.style.width = `${Math.round(strength * 100)}%`;
  el.className = `signal${strength < 0.34 ? ' weak' : ''}`;
  el.title = `signal ${Math.round(strength * 100)}% (renewed ${ago(age)} ago; fades after ${ago(a.ttlMs)})`;
  const fresh = el.nextSibling;
  if (fresh) fresh.textContent = `renewed ${ago(age)} ago`;
}

function remindersButton(a: AgentView): HTMLButtonElement {
  const stopped = a.remindersStopped;
  return onceButton(
    { 'data-action': stopped ? 'resume-reminders' : 'stop-reminders', text: stopped ? 'Resume reminders' : 'Stop reminders' },
    () =>
      act(
        '/dashboard/api/agents/reminders',
        { agent: a.agent, stop: !stopped },
        (stopped ? 'Reminders resumed for ' : 'Reminders stopped for ') + a.agent,
      ),
  );
}

function agentCard(a: AgentView, i: number): HTMLElement {
  const sig = h('span', { class: 'signal', 'data-signal': String(i) }, h('i'));
  paintSignal(sig, a, Date.now());
  const reminders = a.local && S.viewer.self ? remindersButton(a) : null;
  const fresh = h('span', { class: 'fresh' });
  const other = a.dashboardUrl && /^https?:\/\//.test(a.dashboardUrl) ? a.dashboardUrl : null;
  const card = h('div', { class: `agent ag-${a.state}`, 'data-agent': a.agent, 'data-state': a.state }, [
    h('div', { class: 'name' }, [h('span', { class: 'm', text: `${a.machine}/` }), a.session]),
    h('div', { class: 'row' }, [
      h('span', { class: 'dot' }),
      h('span', { text: a.state }),
      badge(a.harness),
      a.autoApprove ? badge('runs tools without asking', 'warn') : null,
      a.remindersStopped ? badge('reminders stopped', 'stalled') : null,
    ]),
    h('div', { class: 'row' }, [sig, fresh]),
    a.task
      ? h('div', { class: 'row working-on' }, [
          'on ',
          a.task.key ? link(taskHref(a.task.key), a.task.name, 'tid') : h('span', { class: 'tid', text: a.task.name }),
        ])
      : null,
    h('div', { class: 'row' }, [
      link(tasksHash({ agent: a.agent, state: 'open', q: '' }), `${a.openTasks} open`),
      h('span', { text: `${a.queuedTasks} queued` }),
      a.lastSpokeAt ? h('span', { class: 'fresh' }, ['spoke ', ageEl(Date.parse(a.lastSpokeAt), ''), ' ago']) : null,
    ]),
    a.cwd ? h('div', { class: 'cwd mono', text: a.cwd }) : null,
    a.local && S.viewer.self ? guardLine(a) : null,
    reminders || a.dashboardUrl
      ? h('div', { class: 'actions' }, [
          reminders,
          other ? h('a', { href: other, rel: 'noopener noreferrer', text: `dashboard of ${a.machine} ↗` }) : null,
        ])
      : null,
  ]);
  paintSignal(sig, a, Date.now());
  return card;
}

export function agentsView(): Promise<void> {
  if (!S.agents.length) {
    show(h('p', { class: 'empty', text: 'No session has a live signal. A session shows here while its bridge runs.' }));
    return Promise.resolve();
  }
  const byMachine = new Map<string, [AgentView, number][]>();
  S.agents.forEach((a, i) => {
    const list = byMachine.get(a.machine) ?? [];
    list.push([a, i]);
    byMachine.set(a.machine, list);
  });
  const machines = [...byMachine.keys()].sort((x, y) => (x === S.machine ? -1 : y === S.machine ? 1 : x.localeCompare(y)));
  show(
    h(
      'div',
      null,
      machines.map((m) => [
        h('div', { class: 'machine-h', text: m + (m === S.machine ? ' (this machine)' : '') }),
        h(
          'div',
          { class: 'agents' },
          byMachine.get(m)!.map(([a, i]) => agentCard(a, i)),
        ),
      ]),
    ),
  );
  loadGuards();
  return Promise.resolve();
}
