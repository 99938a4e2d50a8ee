/**
 * Building the page: every element with createElement and textContent — never innerHTML (the lint
 * forbids it) — because task texts, session names and worker lines are user input.
 */
import { STATE_LABEL } from './state.js';
import { ago, when } from './time.js';

/** Children as `h` takes them: nested lists flatten; null, undefined and false are left out. */
export type Kid = Node | string | number | null | undefined | false | Kid[];

/**
 * Attributes, and three that are not: `class` (className), `text` (textContent) and `on…`
 * (listeners). null, undefined and false leave an attribute out; true sets it empty.
 */
export interface Props {
  class?: string | null | undefined;
  text?: string | number | null | undefined;
  onclick?: (e: MouseEvent) => void;
  onchange?: (e: Event) => void;
  oninput?: (e: Event) => void;
  [attr: string]: string | number | boolean | null | undefined | ((e: never) => void);
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, kids?: Kid): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = String(v);
      else if (k === 'text') el.textContent = String(v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  add(el, kids);
  return el;
}

export function add(el: Node, kids: Kid): void {
  if (kids === undefined || kids === null || kids === false) return;
  for (const c of Array.isArray(kids) ? kids : [kids]) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) add(el, c);
    else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** The element of the page shell (page.ts) with this id. */
export function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

export function link(hash: string, text: string, cls?: string): HTMLAnchorElement {
  return h('a', { href: hash, class: cls, text });
}

export const taskHref = (key: string): string => `#task/${encodeURIComponent(key)}`;
export const chainHref = (key: string): string => `#chain/${encodeURIComponent(key)}`;

export function pill(state: string): HTMLElement {
  return h('span', { class: `pill st-${state}`, text: STATE_LABEL[state as keyof typeof STATE_LABEL] || state });
}

export function badge(text: string, cls?: string, title?: string): HTMLElement {
  return h('span', { class: `badge ${cls || ''}`, text, title });
}

/** An age that keeps counting (tick() repaints every `[data-at]`). */
export function ageEl(at: number, prefix = ''): HTMLElement {
  return h('span', { class: 'age', 'data-at': String(at), 'data-prefix': prefix, title: when(at), text: prefix + ago(Date.now() - at) });
}

let toastTimer: ReturnType<typeof setTimeout> | undefined;

/** A short message at the bottom of the page: what an action did, or why it failed (`bad`). */
export function toast(msg: string, bad = false): void {
  let t = document.getElementById('toast');
  if (!t) {
    t = h('div', { id: 'toast', role: 'status' });
    document.body.appendChild(t);
  }
  const shown = t;
  shown.className = `toast${bad ? ' bad' : ''}`;
  shown.textContent = msg;
  shown.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (shown.hidden = true), bad ? 6000 : 3000);
}
