/**
 * Loads the page again when its script did not load. The browser cuts loads in flight when the
 * machine's network changes (a laptop joining Wi-Fi, the mesh's interface coming up) or the gateway
 * restarts mid-load; when any module of the page's script is cut, the whole script fails and a
 * module that failed stays failed until the page is loaded again: the page would say "connecting…"
 * for good. This module runs before the script (the page holds it inline, first; module scripts
 * run in order, and a failed one reports its error in its turn), loads the page again after 0.5, 1,
 * 2, 4 and 8 s, and after RELOADS loads in a row that failed says so and leaves the rest to the
 * person. It imports nothing and is written into the page (assets/page.ts, its hash in the policy):
 * nothing more has to arrive for it to work.
 */

/** Loads in a row that may fail before the page stops trying. */
const RELOADS = 5;
/** Where the count of failed loads lives across them: this tab's session storage. */
const KEY = 'shrooms.dashboard.reloads';

function say(text: string): void {
  const live = document.getElementById('live');
  if (live) live.textContent = text;
}

/** Runs `f` on the tab's session storage; undefined when this browser keeps none or refuses. */
function stored<T>(f: (s: Storage) => T): T | undefined {
  try {
    return f(sessionStorage);
  } catch {
    return undefined;
  }
}

let failed = false;

function onFailed(): void {
  if (failed) return;
  failed = true;
  const before = stored((s) => Number(s.getItem(KEY) ?? 0));
  // Without a count kept across loads the page could reload for good: it does not reload at all.
  if (before === undefined || before >= RELOADS || !stored((s) => (s.setItem(KEY, String(before + 1)), true))) {
    stored((s) => s.removeItem(KEY));
    say("the page's script did not load: reload to try again");
    return;
  }
  say('the network cut this page short: loading it again…');
  setTimeout(() => location.reload(), 500 * 2 ** before);
}

const script = document.querySelector<HTMLScriptElement>('script[type="module"][src^="/dashboard/app.js"]');
script?.addEventListener('error', onFailed);
window.addEventListener('load', () => {
  if (!failed) stored((s) => s.removeItem(KEY));
});

export {};
