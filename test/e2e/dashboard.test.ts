/**
 * The dashboard in a real headless Chromium (Debian's, driven by playwright-core) against a whole
 * mesh: nats-server, gateway, guard and echo bridges as processes. Everything the page shows comes
 * through the real path — tasks through A2A and the guard, states from the ledger, live changes over
 * its SSE feed — and every action is checked in the ledger with GetTask. A screenshot of each view
 * goes to test-output/dashboard/ for people to look at. No wall-clock assertions: only bounds.
 *
 * Over 300 lines: one Chromium and one mesh for the file (each costs seconds to start); the views
 * and actions run in turn on them.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type ConsoleMessage, type Page, type Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT, eventually, rpc, startMesh, tempDir, type Mesh, type TempDir } from '@shrooms/testing';

// What page.evaluate and evaluateAll run is browser code; the repository compiles without DOM types.
declare const window: any;
declare const document: any;
declare const MutationObserver: any;
declare const getComputedStyle: any;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT = join(REPO_ROOT, 'test-output', 'dashboard');
const FAST_WATCHDOG = { WATCHDOG_FIRST_MS: '300', WATCHDOG_LADDER_MS: '150,150,150,150,150', WATCHDOG_TICK_MS: '50' };

let mesh: Mesh;
let browser: Browser;
let page: Page;
let proxy: Server | undefined;
/** The peers file's folder. */
let peersDir: TempDir | undefined;

/** The phone: a device of the mesh (127.0.0.2 in the peers file) other than this machine. */
const PHONE = '127.0.0.2';

/**
 * A page of another device: Chromium through a small HTTP proxy that connects from PHONE, so the
 * gateway names the viewer from that source address as it would a phone's.
 */
async function phonePage(): Promise<Page> {
  proxy ??= await new Promise<Server>((resolve) => {
    const s = createServer((req, res) => {
      const u = new URL(req.url!);
      const out = request(
        // A connection of its own per request (`agent: false`): no socket the pool kept is reused under a page's load.
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method: req.method,
          headers: req.headers,
          localAddress: PHONE,
          agent: false,
        },
        (up) => {
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      req.pipe(out);
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  const context = await browser.newContext({
    viewport: { width: 1200, height: 900 },
    // `<-loopback>` takes loopback out of Chromium's implicit bypass list: the gateway is on 127.0.0.1.
    proxy: { server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, bypass: '<-loopback>' },
  });
  return context.newPage();
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  await mkdir(OUT, { recursive: true });
  peersDir = await tempDir('dashboard-peers');
  const peers = join(peersDir.path, 'peers.yaml');
  await writeFile(peers, `mesh: home\npeers:\n  ${PHONE}: phone\n`);
  [mesh, browser] = await Promise.all([
    startMesh({
      guard: true,
      env: { SHROOMS_PEERS_FILE: peers },
      sessions: [
        { name: 'slow', env: { ECHO_DELAY_MS: '5000' } },
        { name: 'alpha' },
        { name: 'beta' },
        { name: 'gamma' },
        { name: 'victim', env: { ECHO_DELAY_MS: '600000' } },
        { name: 'busy', env: { ECHO_DELAY_MS: '600000' } },
        { name: 'yolo', env: { BRIDGE_AUTO_APPROVE: 'true' } },
        { name: 'dozy', env: FAST_WATCHDOG },
      ],
    }),
    chromium.launch({
      executablePath: CHROMIUM,
      // Playwright gives each launch a fresh, empty user-data-dir of its own.
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    }),
  ]);
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (err) => console.error('page error:', err.message));
}, 240_000);

afterAll(async () => {
  try {
    proxy?.close();
    await browser?.close();
    await mesh?.stop();
  } finally {
    await peersDir?.remove();
  }
});

function send(session: string, messageId: string, text: string, metadata?: Record<string, unknown>) {
  return rpc(`${mesh.gatewayUrl}/a2a/${session}`, 'SendMessage', {
    message: { messageId, role: 'ROLE_USER', parts: [{ text }] },
    ...(metadata ? { metadata } : {}),
    configuration: { returnImmediately: true },
  });
}

async function getTask(session: string, id: string) {
  const r = await rpc(`${mesh.gatewayUrl}/a2a/${session}`, 'GetTask', { id });
  if (r.error) throw new Error(r.error.message);
  return r.result;
}

/** Chromium's word for a load it cut because a network interface of this host came or went. */
const NETWORK_CHANGED = 'ERR_NETWORK_CHANGED';
/** Navigations to one view tried before a cut one counts as a failure. */
const LOADS = 3;

/**
 * Opens the dashboard at `view` and waits until it is live. Chromium cuts every load in flight
 * with ERR_NETWORK_CHANGED when an interface of the host comes or goes — test files running beside
 * this one make and remove network namespaces. A cut module of the page's script is the page's own
 * to recover from (it loads itself again, boot.ts; tested below), so this only navigates again when
 * the navigation itself was cut, up to LOADS times; any other failure fails at once, with what the
 * page saw.
 */
async function open(view: string, p: Page = page): Promise<void> {
  const seen: string[] = [];
  const saw = (line: string) => seen.push(line);
  const onConsole = (m: ConsoleMessage) => saw(`console ${m.type()}: ${m.text()}`);
  const onError = (e: Error) => saw(`pageerror: ${e.message}`);
  const onFailed = (r: Request) => saw(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`);
  p.on('console', onConsole).on('pageerror', onError).on('requestfailed', onFailed);
  try {
    for (let load = 1; ; load++) {
      try {
        await p.goto(`${mesh.gatewayUrl}/dashboard#${view}`);
        break;
      } catch (err) {
        if (load >= LOADS || !(err as Error).message.includes(NETWORK_CHANGED)) throw err;
      }
    }
    await p.waitForSelector('#live[data-live="1"]');
  } catch (err) {
    throw new Error(`${(err as Error).message}\nthe page saw:\n${seen.join('\n') || '(nothing)'}`, { cause: err });
  } finally {
    p.off('console', onConsole).off('pageerror', onError).off('requestfailed', onFailed);
  }
}

async function shot(name: string, p: Page = page): Promise<void> {
  // Let the feed's last batch land and drop a passing toast, so the picture shows the view itself.
  await p.waitForTimeout(500);
  await p.evaluate(() => document.getElementById('toast')?.remove());
  await p.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

const row = (name: string) => `[data-task="${name}"]`;

it('shows a live task moving from working to completed without a reload', async () => {
  await open('tasks');
  // Record every state the task's row shows, so a short-lived state cannot slip between polls.
  await page.evaluate(() => {
    const w = window as unknown as { seen: string[]; marker: string };
    w.seen = [];
    w.marker = 'the same page';
    const note = () =>
      document.querySelectorAll('.task[data-task="testbox/slow:live-1"]').forEach((el: any) => {
        const s = el.getAttribute('data-state')!;
        if (w.seen[w.seen.length - 1] !== s) w.seen.push(s);
      });
    new MutationObserver(note).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['data-state'],
    });
  });
  const sent = await send('slow', 'live-1', 'run the slow suite');
  expect(sent.result.task.id).toBe('slow:live-1');
  await page.waitForSelector(`${row('testbox/slow:live-1')}[data-state="TASK_STATE_COMPLETED"]`, { timeout: 60_000 });
  const { seen, marker } = await page.evaluate(() => {
    const w = window as unknown as { seen: string[]; marker: string };
    return { seen: w.seen, marker: w.marker };
  });
  expect(marker).toBe('the same page');
  expect(seen).toContain('TASK_STATE_WORKING');
  expect(seen.indexOf('TASK_STATE_WORKING')).toBeLessThan(seen.indexOf('TASK_STATE_COMPLETED'));
  expect((await getTask('slow', 'slow:live-1')).status.state).toBe('TASK_STATE_COMPLETED');
  await expect(page.locator(`${row('testbox/slow:live-1')} .result`).textContent()).resolves.toContain('run the slow suite');
});

it('renders a chain of three tasks as a tree from the person who asked', async () => {
  expect((await send('alpha', 'c-root', 'quiet: plan the release')).result.task.id).toBe('alpha:c-root');
  const mid = await send('beta', 'c-mid', 'quiet: run the tests for the release', {
    'shrooms/parent': 'testbox/alpha:c-root',
    'shrooms/from': 'testbox/alpha',
  });
  expect(mid.result.task.metadata['shrooms/depth']).toBe(1);
  const leaf = await send('gamma', 'c-leaf', 'quiet: check the flaky test', {
    'shrooms/parent': 'testbox/beta:c-mid',
    'shrooms/from': 'testbox/beta',
  });
  expect(leaf.result.task.metadata['shrooms/depth']).toBe(2);

  await open('chains');
  const chain = page.locator('[data-chain="testbox.alpha.c-root"]');
  const leafNode = chain.locator('ul.tree > li > ul.tree > li > ul.tree > li > [data-node="testbox/gamma:c-leaf"]');
  await leafNode.waitFor();
  await expect(chain.locator('ul.tree.top > li > [data-node="testbox/alpha:c-root"]').count()).resolves.toBe(1);
  await expect(chain.locator('ul.tree.top > li > ul.tree > li > [data-node="testbox/beta:c-mid"]').count()).resolves.toBe(1);
  await expect(chain.locator('.origin').textContent()).resolves.toMatch(/person\s*testbox/);
  // Each node wears its state's colour, and follows it live: the leaf's worker finishes.
  await page.waitForSelector('[data-chain="testbox.alpha.c-root"] [data-node="testbox/gamma:c-leaf"].st-TASK_STATE_WORKING');
  const done = await rpc(`${mesh.gatewayUrl}/a2a/gamma`, 'UpdateTask', {
    id: 'gamma:c-leaf',
    status: 'done',
    text: 'the flaky test is fixed',
    metadata: { 'shrooms/from': 'testbox/gamma' },
  });
  expect(done.result.status.state).toBe('TASK_STATE_COMPLETED');
  await page.waitForSelector('[data-chain="testbox.alpha.c-root"] [data-node="testbox/gamma:c-leaf"].st-TASK_STATE_COMPLETED');
  const colours = await chain.locator('[data-node]').evaluateAll((els) => els.map((e) => getComputedStyle(e).borderLeftColor as string));
  expect(colours).toHaveLength(3);
  expect(colours[0]).toBe(colours[1]);
  expect(colours[2]).not.toBe(colours[0]);
  await shot('chains');

  await leafNode.click();
  await page.waitForSelector('[data-detail="testbox.gamma.c-leaf"]');
  await expect(page.locator('.facts').textContent()).resolves.toContain('testbox (testbox/beta)');
  await expect(page.locator('.msgs').textContent()).resolves.toContain('quiet: check the flaky test');
  await expect(page.locator('.msgs').textContent()).resolves.toContain('the flaky test is fixed');
  await shot('task-detail');
});

it('cancels a task from the page, and the ledger has it canceled', async () => {
  await send('victim', 'v-1', 'a long job nobody needs any more');
  await eventually(async () => (await getTask('victim', 'victim:v-1')).status.state === 'TASK_STATE_WORKING', 60_000);
  await open('tasks?agent=testbox%2Fvictim');
  const r = page.locator(row('testbox/victim:v-1'));
  await page.waitForSelector(`${row('testbox/victim:v-1')}[data-state="TASK_STATE_WORKING"]`);
  await r.locator('[data-action="cancel"]').click();
  await r.locator('button', { hasText: 'Confirm cancel' }).click();
  const canceled = await eventually(async () => {
    const t = await getTask('victim', 'victim:v-1');
    return t.status.state === 'TASK_STATE_CANCELED' ? t : undefined;
  }, 30_000);
  expect(canceled.metadata['shrooms/canceled_by']).toBe('testbox');
  await page.waitForSelector(`${row('testbox/victim:v-1')}[data-state="TASK_STATE_CANCELED"]`);
  await expect(r.locator('[data-action="cancel"]').count()).resolves.toBe(0);
});

it('keeps an armed Cancel when a reload asked for before the first click answers after it', async () => {
  await send('victim', 'v-armed', 'a job to cancel while the list reloads');
  await eventually(async () => (await getTask('victim', 'victim:v-armed')).status.state === 'TASK_STATE_WORKING', 60_000);
  await open('tasks?agent=testbox%2Fvictim');
  await page.waitForSelector(`${row('testbox/victim:v-armed')}[data-state="TASK_STATE_WORKING"]`);
  await page.waitForSelector('#main:not([aria-busy])');
  // The next load of the list is held until the Cancel button is armed: a new task of the session
  // (queued behind v-armed) makes the page reload the list.
  let asked!: () => void;
  const held = new Promise<void>((resolve) => (asked = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/dashboard/api/tasks?*', async (route) => {
    asked();
    await released;
    await route.continue();
  });
  try {
    await send('victim', 'v-behind', 'queued behind it');
    await held;
    const r = page.locator(row('testbox/victim:v-armed'));
    await r.locator('[data-action="cancel"]').click();
    release();
    await page.waitForSelector('#main:not([aria-busy])');
    // The reload answered after the first click and did not replace the armed button.
    await expect(r.locator('[data-action="cancel"]').textContent()).resolves.toBe('Confirm cancel');
    await r.locator('button', { hasText: 'Confirm cancel' }).click();
    await eventually(async () => (await getTask('victim', 'victim:v-armed')).status.state === 'TASK_STATE_CANCELED', 30_000);
  } finally {
    release();
    await page.unroute('**/dashboard/api/tasks?*');
    await rpc(`${mesh.gatewayUrl}/a2a/victim`, 'CancelTask', { id: 'victim:v-behind' });
  }
});

it('shows another device Cancel only on the task it asked for, and its cancel is recorded as its own', async () => {
  const phone = await phonePage();
  await send('victim', 'v-owner', 'a job of this machine');
  await open('tasks?agent=testbox%2Fvictim', phone);
  // The phone asks for a task from its own page (same origin, JSON): the gateway names it `phone.home`.
  const asked: any = await phone.evaluate(
    async ([url, body]) =>
      (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, body })).json(),
    [
      `${mesh.gatewayUrl}/a2a/victim`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: 'v-phone', role: 'ROLE_USER', parts: [{ text: 'a job the phone asked for' }] },
          configuration: { returnImmediately: true },
        },
      }),
    ] as const,
  );
  expect(asked.result?.task?.metadata?.['shrooms/device'], JSON.stringify(asked)).toBe('phone.home');
  const own = phone.locator(row('testbox/victim:v-phone'));
  const other = phone.locator(row('testbox/victim:v-owner'));
  await own.locator('[data-action="cancel"]').waitFor();
  await other.waitFor();
  await expect(other.locator('[data-action="cancel"]').count()).resolves.toBe(0);
  await own.locator('[data-action="cancel"]').click();
  await own.locator('button', { hasText: 'Confirm cancel' }).click();
  const canceled = await eventually(async () => {
    const t = await getTask('victim', 'victim:v-phone');
    return t.status.state === 'TASK_STATE_CANCELED' ? t : undefined;
  }, 30_000);
  expect(canceled.metadata['shrooms/canceled_by']).toBe('phone.home');
  await phone.context().close();
});

it('releases a held task from the page, and it runs', async () => {
  // An agent's task for a session that runs tools without asking: the guard holds it.
  const sent = await send('yolo', 'h-1', 'deploy the docs site', { 'shrooms/from': 'testbox/alpha' });
  expect(sent.result.task.metadata['shrooms/held']).toBe(true);
  await open('attention');
  const held = page.locator(`#held ${row('testbox/yolo:h-1')}`);
  await held.waitFor();
  expect((await getTask('yolo', 'yolo:h-1')).status.state).toBe('TASK_STATE_SUBMITTED');
  await held.locator('[data-action="release"]').click();
  const done = await eventually(async () => {
    const t = await getTask('yolo', 'yolo:h-1');
    return t.status.state === 'TASK_STATE_COMPLETED' ? t : undefined;
  }, 30_000);
  expect(done.metadata['shrooms/held']).not.toBe(true);
  expect(done.artifacts[0].parts[0].text).toBe('deploy the docs site');
  await page.locator(`#held ${row('testbox/yolo:h-1')}`).waitFor({ state: 'detached' });
});

it('shows stalled tasks, held tasks and guard refusals that need the owner', async () => {
  await open('attention');
  // A worker that went quiet: the watchdog's ladder runs out and the task stalls.
  await send('dozy', 'z-1', 'quiet: thinking it over');
  // A cycle (alpha → beta → alpha) the guard refuses; refusals reach the page live.
  const refused = await send('alpha', 'cycle-1', 'ask beta again', {
    'shrooms/parent': 'testbox/beta:c-mid',
    'shrooms/from': 'testbox/beta',
  });
  expect(refused.error.code).toBe(-32052);
  // One more held task, to be rejected.
  await send('yolo', 'h-2', 'format the disk', { 'shrooms/from': 'testbox/beta' });
  await page.locator(`#refusals [data-refusal="CHAIN_CYCLE"]`).waitFor({ timeout: 30_000 });
  await page.locator(`#stalled ${row('testbox/dozy:z-1')}`).waitFor({ timeout: 60_000 });
  await page.locator(`#held ${row('testbox/yolo:h-2')}`).waitFor();
  await expect(page.locator(`#stalled ${row('testbox/dozy:z-1')} .badge.stalled`).count()).resolves.toBe(1);
  await shot('attention');

  // A refusal that arrives between Reject's two clicks is counted at once (the tab) and shown once
  // the button is disarmed: repainting the view then would replace the armed button.
  const h2 = page.locator(`#held ${row('testbox/yolo:h-2')}`);
  const tab = page.locator('[data-tab="attention"] .count');
  const before = Number(await tab.textContent());
  await h2.locator('button', { hasText: 'Reject' }).click();
  const again = await send('alpha', 'cycle-2', 'ask beta once more', {
    'shrooms/parent': 'testbox/beta:c-mid',
    'shrooms/from': 'testbox/beta',
  });
  expect(again.error.code).toBe(-32052);
  await page.waitForFunction((n) => Number(document.querySelector('[data-tab="attention"] .count')?.textContent) > n, before);
  await expect(h2.locator('button.danger').first().textContent()).resolves.toBe('Confirm reject');
  await h2.locator('button', { hasText: 'Confirm reject' }).click();
  await eventually(async () => (await getTask('yolo', 'yolo:h-2')).status.state === 'TASK_STATE_REJECTED', 30_000);
  await page.locator('#refusals [data-refusal="CHAIN_CYCLE"]').nth(1).waitFor({ timeout: 30_000 });
});

it('stops reminders for a session from the agents view', async () => {
  await open('agents');
  const card = page.locator('[data-agent="testbox/dozy"]');
  await card.waitFor();
  await page.locator('[data-agent="testbox/slow"]').waitFor();
  await card.locator('[data-action="stop-reminders"]').click();
  await card.locator('.badge', { hasText: 'reminders stopped' }).waitFor({ timeout: 30_000 });
  await card.locator('[data-action="resume-reminders"]').waitFor();
  await shot('agents');
});

it('shows what a session works on, linked to the task', async () => {
  await send('busy', 'b-on', 'a job the agents view names');
  await eventually(async () => (await getTask('busy', 'busy:b-on')).status.state === 'TASK_STATE_WORKING', 60_000);
  await open('agents');
  const on = page.locator('[data-agent="testbox/busy"] .working-on a');
  await on.waitFor({ timeout: 30_000 }); // the next signal names it
  expect(await on.textContent()).toBe('testbox/busy:b-on');
  await on.click();
  expect(await page.evaluate(() => decodeURIComponent(window.location.hash))).toBe('#task/testbox.busy.b-on');
  await page.locator('#main', { hasText: 'a job the agents view names' }).waitFor();
  await open('agents');
  await rpc(`${mesh.gatewayUrl}/a2a/busy`, 'CancelTask', { id: 'busy:b-on' });
  await page.locator('[data-agent="testbox/busy"]').waitFor();
  await page.locator('[data-agent="testbox/busy"] .working-on').waitFor({ state: 'detached', timeout: 30_000 });
});

it('shows a session’s loop-guard window and lets the owner empty it, as the guard then has it', async () => {
  const guard = async () => (await rpc(`${mesh.gatewayUrl}/a2a/gamma`, 'GuardWindow', {})).result;
  await send('gamma', 'g-1', 'one more for the window');
  const before = await guard();
  expect(before.count).toBeGreaterThanOrEqual(1);
  await open('agents');
  const line = page.locator('[data-agent="testbox/gamma"] [data-guard]');
  await page.waitForSelector(`[data-agent="testbox/gamma"] [data-guard][data-count="${before.count}"]`);
  await expect(line.textContent()).resolves.toContain(`${before.count} of ${before.limit} new tasks from testbox`);
  await line.locator('[data-action="reset-guard"]').click();
  await page.waitForSelector('[data-agent="testbox/gamma"] [data-guard][data-count="0"]', { timeout: 30_000 });
  expect((await guard()).count).toBe(0);
  expect((await send('gamma', 'g-2', 'admitted after the reset')).result.task.id).toBe('gamma:g-2');
});

it('shows task text as text, never as markup', async () => {
  const evil = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> & done';
  await send('slow', 'xss-1', evil);
  await open('tasks?agent=testbox%2Fslow');
  const text = page.locator(`${row('testbox/slow:xss-1')} .text`);
  await text.waitFor();
  await expect(text.textContent()).resolves.toBe(evil);
  await expect(page.locator(`${row('testbox/slow:xss-1')} img, ${row('testbox/slow:xss-1')} script`).count()).resolves.toBe(0);
  await expect(page.evaluate(() => (window as any).pwned)).resolves.toBeUndefined();
});

it('fits a phone-sized screen', async () => {
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  try {
    await open('tasks', phone);
    await phone.locator('.task').first().waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('tasks-phone', phone);
    await open('tasks');
    await page.locator('.task').first().waitFor();
    await shot('tasks');
  } finally {
    await phone.close();
  }
});

/** The tab's count of failed loads (boot.ts). */
const RELOADS_KEY = 'shrooms.dashboard.reloads';

/** A module of the page's script: one that app.js imports. */
const TASK_JS = /\/dashboard\/task\.js$/;
const always = () => true;

/** The loads of a module a page asked for (the one being asked counted) and the page's loads that ended. */
interface Seen {
  asked: number;
  loads: string[];
}

/**
 * A page whose loads of `module` (task.js unless said) fail as a changed network fails them while
 * `cut` says so, counting those loads and the page's own loads; `before` runs on the page first.
 * Closed after `test`.
 */
async function withCutScript(
  cut: (seen: Seen) => boolean,
  test: (p: Page, seen: Seen) => Promise<void>,
  { before, module = TASK_JS }: { before?: (p: Page) => Promise<unknown>; module?: RegExp } = {},
): Promise<void> {
  const p = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  try {
    await before?.(p);
    const seen: Seen = { asked: 0, loads: [] };
    await p.route(module, (route) => (++seen.asked, cut(seen) ? route.abort('internetdisconnected') : route.continue()));
    p.on('load', () => seen.loads.push(p.url()));
    await p.goto(`${mesh.gatewayUrl}/dashboard#tasks`);
    await test(p, seen);
  } finally {
    await p.close();
  }
}

it('is styled by the page itself: no stylesheet load a network change could cut, nothing the policy refuses', async () => {
  const p = await browser.newPage({ viewport: { width: 1200, height: 900 }, colorScheme: 'light' });
  try {
    const sheets: string[] = [];
    p.on('request', (r) => {
      if (r.resourceType() === 'stylesheet') sheets.push(r.url());
    });
    await p.addInitScript(() => {
      (window as any).refused = [];
      document.addEventListener('securitypolicyviolation', (e: any) =>
        (window as any).refused.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    await open('tasks', p);
    // styles.ts: body { background: var(--bg) }, --bg #f6f7f9 in the light scheme.
    expect(await p.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(246, 247, 249)');
    expect(sheets).toEqual([]);
    expect(await p.evaluate(() => (window as any).refused)).toEqual([]);
  } finally {
    await p.close();
  }
});

it('loads itself again when a module of its script was cut, and goes live', async () => {
  await withCutScript(
    ({ asked }) => asked <= 2,
    async (p, seen) => {
      await p.waitForSelector('#live[data-live="1"]', { timeout: 30_000 });
      expect(seen.asked).toBe(3);
      expect(seen.loads).toHaveLength(3);
      expect(seen.loads.every((u) => u.endsWith('/dashboard#tasks'))).toBe(true);
      await p.locator('#tabs [data-tab="tasks"]').waitFor();
      // A load that went well forgets the failed ones: the next cut starts the count again.
      expect(await p.evaluate((k) => window.sessionStorage.getItem(k), RELOADS_KEY)).toBeNull();
    },
  );
});

it('loads itself again when the first script file it asked for was cut, whichever that was', async () => {
  // Every script file of the first load cut: what loads the page again is in the page, no file of
  // its own that could be among them.
  await withCutScript(
    ({ loads }) => loads.length === 0,
    async (p, seen) => {
      await p.waitForSelector('#live[data-live="1"]', { timeout: 30_000 });
      expect(seen.loads).toHaveLength(2);
    },
    { module: /\/dashboard\/[a-z-]+\.js(\?|$)/ },
  );
});

it('says so, and stops loading itself again, when its script never loads', async () => {
  await withCutScript(always, async (p, seen) => {
    // Five loads again (after 0.5 + 1 + 2 + 4 + 8 s), then the page says what happened.
    await p.waitForSelector('#live:text("did not load")', { timeout: 60_000 });
    expect(seen.asked).toBe(6);
    expect(await p.getAttribute('#live', 'data-live')).toBe('0');
    // It gave up with its count cleared: the person's own reload tries five times again.
    expect(await p.evaluate((k) => window.sessionStorage.getItem(k), RELOADS_KEY)).toBeNull();
    await p.reload();
    await p.waitForSelector('#live:text("loading it again")');
    expect(seen.asked).toBe(7);
  });
});

it('does not load itself again where the tab keeps no count of its loads', async () => {
  await withCutScript(
    always,
    async (p, seen) => {
      await p.waitForSelector('#live:text("did not load")');
      expect(seen.asked).toBe(1);
      expect(seen.loads).toHaveLength(1);
    },
    {
      // Session storage that refuses writes (a full quota, a locked-down browser): no count, no reloads.
      before: (p) =>
        p.addInitScript(() => {
          (window as any).Storage.prototype.setItem = () => {
            throw new Error('QuotaExceededError');
          };
        }),
    },
  );
});

it('keeps the Agents view when a task list asked for before the switch answers after it', async () => {
  const p = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  try {
    // Marks each answer the page read, one task after it was read: whatever the page painted with
    // it (in the promise continuations of that read) is on screen by then. A load Chromium cut
    // (ERR_NETWORK_CHANGED: other test files make and remove network namespaces) is marked too: the
    // page got nothing from it to paint, and waiting for its answer would wait for good.
    await p.addInitScript(() => {
      const w = window as any;
      const fetch0 = w.fetch.bind(w);
      w.answered = [];
      const mark = (url: string) => setTimeout(() => w.answered.push(url), 0);
      w.fetch = async (url: string, init?: unknown) => {
        let res: any;
        try {
          res = await fetch0(url, init);
        } catch (err) {
          mark(String(url));
          throw err;
        }
        const text = res.text.bind(res);
        res.text = async () => {
          try {
            return await text();
          } finally {
            mark(String(url));
          }
        };
        return res;
      };
    });
    await open('agents', p);
    await p.locator('#main [data-agent="testbox/alpha"]').waitFor();
    // Every task-list answer is held back until the viewer is on Agents again.
    const held: { continue(): Promise<void> }[] = [];
    let heldOne!: () => void;
    const asked = new Promise<void>((r) => (heldOne = r));
    await p.route(/\/dashboard\/api\/tasks(\?|$)/, (route) => {
      held.push(route);
      heldOne();
    });
    await p.click('#tabs [data-tab="tasks"]');
    await asked;
    await p.click('#tabs [data-tab="agents"]');
    await p.locator('#main [data-agent="testbox/alpha"]').waitFor();
    const n = held.length;
    await Promise.all(held.map((r) => r.continue()));
    await p.unroute(/\/dashboard\/api\/tasks(\?|$)/);
    await p.waitForFunction((k) => (window as any).answered.filter((u: string) => u.startsWith('/dashboard/api/tasks')).length >= k, n);
    expect(await p.locator('#main [data-agent]').count()).toBeGreaterThan(0);
    expect(await p.locator('#main .task').count()).toBe(0);
    expect(await p.evaluate(() => window.location.hash)).toBe('#agents');
  } finally {
    await p.close();
  }
});
