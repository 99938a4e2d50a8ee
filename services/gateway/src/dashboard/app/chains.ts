/** Ask chains as trees: who asked first (a person, an agent or a schedule), then who asked whom. */
import type { ChainAnswer, ChainNodeView, ChainView, ChainsPage, TaskRowView } from '../wire.js';
import { ageEl, h, link, pill, taskHref, type Kid } from './dom.js';
import { load, loading, show } from './render.js';
import type { Route } from './route.js';
import { qs } from './server.js';
import { S } from './state.js';

/** Chains per page. */
const CHAINS_PAGE = 20;

function originOf(row: TaskRowView | null): Kid[] {
  if (!row) return [h('span', { class: 'kind', text: 'unknown' }), 'the first task is no longer in the ledger'];
  if (row.origin === 'schedule')
    return [h('span', { class: 'kind', text: 'schedule' }), h('b', { text: row.schedule || '' }), ' via ', row.device];
  if (row.origin === 'agent') return [h('span', { class: 'kind', text: 'agent' }), h('b', { text: row.from })];
  return [h('span', { class: 'kind', text: 'person' }), h('b', { text: row.from })];
}

function treeNode(n: ChainNodeView, here: string | null): HTMLElement {
  const r = n.row;
  const node = r
    ? h(
        'a',
        {
          href: taskHref(r.key),
          class: `node st-${r.state}${here === r.key ? ' here' : ''}`,
          'data-node': r.name,
          'data-state': r.state,
          title: r.text,
        },
        [
          pill(r.state),
          h('span', { class: 'to', text: r.to }),
          h('span', { class: 'mono', text: r.id }),
          r.text ? h('span', { class: 'snip', text: r.text.length > 60 ? `${r.text.slice(0, 59)}…` : r.text }) : null,
        ],
      )
    : h('span', { class: 'node missing', text: `${n.name || n.key} (not in the ledger)` });
  const kids = n.children.map((c) => treeNode(c, here));
  if (n.more) kids.push(h('li', { class: 'empty', text: `+ ${n.more} more` }));
  return h('li', null, [node, kids.length ? h('ul', { class: 'tree' }, kids) : null]);
}

function chainCard(c: ChainView, here: string | null): HTMLElement {
  const first = c.root.row || c.root.children[0]?.row;
  return h('div', { class: 'chain', 'data-chain': c.root.key }, [
    h('div', { class: 'origin' }, [
      originOf(c.root.row ? c.root.row : null),
      ' · ',
      c.size + (c.size === 1 ? ' task' : ' tasks'),
      first ? [' · started ', ageEl(first.createdAt), ' ago'] : null,
    ]),
    h('ul', { class: 'tree top' }, treeNode(c.root, here)),
  ]);
}

export function chainsView(r: Route, quiet: boolean): Promise<void> {
  const offset = Number(r.params.get('offset') || 0);
  return load<ChainsPage>(`/dashboard/api/chains${qs({ offset, limit: CHAINS_PAGE })}`, quiet ? null : loading(), (d) => {
    S.shown = { view: 'chains', data: d };
    const pager = h('div', { class: 'pager' }, [
      offset > 0 ? link(`#chains?offset=${Math.max(0, offset - CHAINS_PAGE)}`, '‹ Newer') : h('span'),
      d.next !== undefined ? link(`#chains?offset=${d.next}`, 'Older ›') : h('span'),
    ]);
    show(
      h('div', null, [
        d.total
          ? h('p', {
              class: 'hint',
              text: 'Who asked whom: each tree starts at the person, agent or schedule that asked first and follows shrooms/parent down; colours are task states.',
            })
          : h('p', {
              class: 'empty',
              text: 'No task has asked another yet. When a task asks another agent (shrooms/parent), its chain shows here.',
            }),
        d.chains.map((c) => chainCard(c, null)),
        pager,
      ]),
    );
  });
}

export function chainView(r: Route, quiet: boolean): Promise<void> {
  return load<ChainAnswer>(`/dashboard/api/chain${qs({ key: r.arg })}`, quiet ? null : loading(), (d) => {
    S.shown = { view: 'chain', data: d };
    show(h('div', null, [h('h2', { text: 'Chain' }), chainCard(d.chain, r.arg), link('#chains', '‹ all chains')]));
  });
}
