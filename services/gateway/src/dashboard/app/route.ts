/** The view is in the hash: `#tasks?agent=…&state=…&q=…`, `#task/KEY`, `#chains?offset=N`, `#chain/KEY`, `#attention`, `#agents`. */
import { qs } from './server.js';
import type { Filter } from './state.js';

export interface Route {
  view: string;
  arg: string;
  params: URLSearchParams;
}

export function route(): Route {
  let raw = location.hash.replace(/^#/, '');
  let q = '';
  const i = raw.indexOf('?');
  if (i >= 0) {
    q = raw.slice(i + 1);
    raw = raw.slice(0, i);
  }
  const slash = raw.indexOf('/');
  const view = (slash >= 0 ? raw.slice(0, slash) : raw) || 'tasks';
  let arg = '';
  if (slash >= 0) {
    try {
      arg = decodeURIComponent(raw.slice(slash + 1));
    } catch {
      arg = '';
    }
  }
  return { view, arg, params: new URLSearchParams(q) };
}

export function filterOf(r: Route): Filter {
  return { agent: r.params.get('agent') || '', state: r.params.get('state') || 'all', q: r.params.get('q') || '' };
}

export function tasksHash(f: Filter): string {
  return `#tasks${qs({ agent: f.agent, state: f.state === 'all' ? '' : f.state, q: f.q })}`;
}
