/**
 * The dashboard's page script, served as `/dashboard/app.js` with its modules beside it (ES
 * modules compiled by tsc from this folder; no framework, no bundler). The page shell is page.ts;
 * what the gateway answers is typed in ../wire.ts.
 *
 *   state    what the page holds          render   frame, tabs and which view the hash asks for
 *   dom      building elements as text    live     the SSE feed and rows changing in place
 *   rows     a task as a row              actions  the buttons, and posting what they do
 *   tasks, task, chains, attention, agents, guard  the views
 */
import { paintSignal } from './agents.js';
import { connect } from './live.js';
import { render } from './render.js';
import { S } from './state.js';
import { ago } from './time.js';

/** Every second: ages count on and signals fade. */
function tick(): void {
  const now = Date.now();
  for (const el of document.querySelectorAll<HTMLElement>('[data-at]'))
    el.textContent = (el.getAttribute('data-prefix') || '') + ago(now - Number(el.getAttribute('data-at')));
  for (const el of document.querySelectorAll<HTMLElement>('[data-signal]')) {
    const a = S.agents[Number(el.getAttribute('data-signal'))];
    if (a) paintSignal(el, a, now);
  }
}

window.addEventListener('hashchange', () => {
  S.cursors = [];
  void render();
});
document.addEventListener('DOMContentLoaded', () => {
  void render();
  connect();
  setInterval(tick, 1000);
});
