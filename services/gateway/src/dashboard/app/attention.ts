/** What needs the owner: held and stalled tasks, the guard's refusals and the bridges' notes. */
import type { AttentionAnswer, NoteView, RefusalView } from '../wire.js';
import { onceButton } from './actions.js';
import { ageEl, badge, h } from './dom.js';
import { resetGuard } from './guard.js';
import { load, loading, show } from './render.js';
import type { Route } from './route.js';
import { taskRow } from './rows.js';
import { S } from './state.js';

export function attentionView(_r: Route, quiet: boolean): Promise<void> {
  return load<AttentionAnswer>('/dashboard/api/attention', quiet ? null : loading(), (d) => {
    S.shown = { view: 'attention', data: d };
    S.refusals = d.refusals;
    S.notes = d.notes;
    paintAttention(d);
  });
}

export function paintAttention(d: AttentionAnswer): void {
  show(
    h('div', null, [
      h('h2', { text: `Held for the owner (${d.held.length})` }),
      d.held.length
        ? h('div', { class: 'rows', id: 'held' }, d.held.map(taskRow))
        : h('p', { class: 'empty', text: 'No task waits for you to let it through.' }),
      h('h2', { text: `Stalled (${d.stalled.length})` }),
      d.stalled.length
        ? h('div', { class: 'rows', id: 'stalled' }, d.stalled.map(taskRow))
        : h('p', { class: 'empty', text: 'No task is stalled.' }),
      h('h2', { text: `Guard refusals (${S.refusals.length})` }),
      S.refusals.length
        ? refusalTable(S.refusals)
        : h('p', { class: 'empty', text: 'The guard has refused nothing since this page began following.' }),
      h('h2', { text: 'Notes to the owner' }),
      S.notes.length ? noteTable(S.notes) : h('p', { class: 'empty', text: 'No notes yet.' }),
    ]),
  );
}

const head = (names: string[]) =>
  h(
    'thead',
    null,
    h(
      'tr',
      null,
      names.map((x) => h('th', { text: x })),
    ),
  );

function refusalTable(list: RefusalView[]): HTMLElement {
  return h('table', { class: 'list', id: 'refusals' }, [
    head(['when', 'refused', 'asked by', 'to', 'why', '']),
    h(
      'tbody',
      null,
      list.map((f) => {
        const agent = `${f.machine}/${f.session}`;
        const reset =
          f.key === 'LOOP_GUARD' && S.viewer.self && f.machine === S.machine
            ? onceButton(
                { 'data-action': 'reset-guard', text: 'Reset window', title: `Empty the loop-guard window of ${f.device} for ${agent}` },
                () => resetGuard(agent, f.device, () => (reset!.textContent = 'Window reset')),
              )
            : null;
        return h('tr', { 'data-refusal': f.key }, [
          h('td', { class: 'nowrap' }, ageEl(Date.parse(f.at) || Date.now(), '')),
          h('td', { class: 'nowrap' }, [badge(f.key, 'stalled'), ' ', h('span', { class: 'mono', text: String(f.code) })]),
          h('td', { text: f.from ? `${f.device} (${f.from})` : f.device }),
          h('td', { class: 'nowrap', text: agent }),
          h('td', { text: f.message }),
          h('td', { class: 'nowrap' }, reset),
        ]);
      }),
    ),
  ]);
}

function noteTable(list: NoteView[]): HTMLElement {
  return h('table', { class: 'list' }, [
    head(['when', 'what', 'session', 'task']),
    h(
      'tbody',
      null,
      list.map((n) =>
        h('tr', null, [
          h('td', { class: 'nowrap' }, ageEl(Date.parse(n.at) || Date.now(), '')),
          h('td', { class: 'nowrap', text: n.kind + (n.nudge ? ` #${n.nudge}` : '') }),
          h('td', { class: 'nowrap', text: n.agent }),
          h('td', { class: 'mono', text: n.taskId || '' }),
        ]),
      ),
    ),
  ]);
}
