import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { StartServerOptions } from '../../src/runtime/server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Browser tests drive Debian's Chromium against a real server over loopback. Chromium resolves
 * every *.localhost name to 127.0.0.1, so the links the service hands out work as they are; the
 * server runs on a port chosen up front so those links carry it.
 */

export const SCREENSHOTS = new URL('../screenshots/', import.meta.url);
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AppServer extends TestServer {
  appUrl: string;
  apiUrl: string;
  siteUrl(name: string): string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export async function startAppServer(
  env: Record<string, string> = {},
  now?: () => number,
  extra: Pick<StartServerOptions, 'fetchClientMetadata'> = {},
): Promise<AppServer> {
  const port = await freePort();
  const server = await startTestServer(
    { PLINTH_PORT: String(port), PLINTH_API_RATE_PER_NETWORK: '0', PLINTH_SIGNIN_EMAILS_PER_NETWORK: '0', ...env },
    now,
    extra,
  );
  return Object.assign(server, {
    appUrl: `http://app.localhost:${port}`,
    apiUrl: `http://api.localhost:${port}`,
    siteUrl: (name: string) => `http://${name}.sites.localhost:${port}`,
  });
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * The worker process's one Chromium, launched by the first file that asks for it. The first-line
 * projects run file after file in one process (`isolate: false`), and a launch costs a second or
 * more of a busy core; a browser context per person keeps each file's and each case's cookies
 * apart. One that crashed is launched again. It goes with the worker: Chromium launched on a
 * --remote-debugging-pipe exits when the process at the pipe's other end does, killed or not.
 */
export function sharedBrowser(): Promise<Browser> {
  const held = globalThis as { [SHARED_BROWSER]?: Promise<Browser> };
  const current = held[SHARED_BROWSER];
  if (current) return current.then((browser) => (browser.isConnected() ? browser : forget(current)));
  const launched: Promise<Browser> = launchBrowser().then(
    (browser) => {
      browser.on('disconnected', () => void forget(launched));
      return browser;
    },
    (err: unknown) => forget(launched, err),
  );
  held[SHARED_BROWSER] = launched;
  return launched;

  function forget(which: Promise<Browser>, err?: unknown): Promise<Browser> {
    if (held[SHARED_BROWSER] === which) delete held[SHARED_BROWSER];
    if (err !== undefined) throw err;
    return sharedBrowser();
  }
}
// On globalThis rather than in this module: what a file imports may be evaluated again for the next file.
const SHARED_BROWSER = Symbol.for('plinth.test.sharedBrowser');

/**
 * A stranger's browser: a context (own cookies) with one page at the given width (and height:
 * 900 px unless told), with or without JavaScript; console errors are collected. Closing the
 * context gives the page back to the browser's pool (givePageBack), so that the next person gets
 * it wiped rather than a new one: a new page costs Chromium a window and a renderer, 0.3–0.6 s of
 * a core, and the account app's flows alone open some twenty.
 */
export async function openPage(
  browser: Browser,
  width = 1280,
  { height = 900, javaScriptEnabled = true }: { height?: number; javaScriptEnabled?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const pool = idlePages(browser);
  const index = pool.findLastIndex((lease) => lease.javaScriptEnabled === javaScriptEnabled);
  const lease = index === -1 ? await newLease(browser, javaScriptEnabled) : pool.splice(index, 1)[0]!;
  lease.idle = false;
  const { context, page } = lease;
  const size = page.viewportSize();
  if (size?.width !== width || size.height !== height) await page.setViewportSize({ width, height });
  context.on('request', (request) => {
    const { protocol, origin } = new URL(request.url());
    if (protocol === 'http:' || protocol === 'https:') lease.origins.add(origin);
  });
  const errors: string[] = [];
  // Refusal pages answer 4xx on purpose, which Chromium logs for the document; what breaks a
  // page is a failing subresource or a script error, so those are what is collected.
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && response.request().resourceType() !== 'document') errors.push(`${response.status()} ${response.url()}`);
  });
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('dialog', (dialog) => {
    errors.push(`dialog opened: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { context, page, errors };
}

/** A page of openPage's, and what giving it back must undo. */
interface Lease {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  /** The origins its pages sent requests to since it was wiped: their storage is wiped next. */
  origins: Set<string>;
  /** A context option: a page with JavaScript off is handed out only to those who ask for one. */
  javaScriptEnabled: boolean;
  /** False once it was given something no wipe takes back (exposeFunction, addInitScript, routes). */
  reusable: boolean;
  idle: boolean;
}

/** The browser's pages that were given back, wiped; on globalThis, as the shared browser is. */
function idlePages(browser: Browser): Lease[] {
  const held = globalThis as { [PAGE_POOLS]?: WeakMap<Browser, Lease[]> };
  const pools = (held[PAGE_POOLS] ??= new WeakMap());
  const pool = pools.get(browser) ?? [];
  pools.set(browser, pool);
  return pool;
}
const PAGE_POOLS = Symbol.for('plinth.test.pagePools');

/** The browser's contexts but those waiting in openPage's pool. */
export function busyContexts(browser: Browser): BrowserContext[] {
  const idle = new Set(idlePages(browser).map((lease) => lease.context));
  return browser.contexts().filter((context) => !idle.has(context));
}

/** What a page or context may be given that a wipe cannot take back: such a page is closed for good. */
const LASTING = ['exposeFunction', 'exposeBinding', 'addInitScript', 'route', 'routeFromHAR', 'routeWebSocket'] as const;

async function newLease(browser: Browser, javaScriptEnabled: boolean): Promise<Lease> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled });
  const page = await context.newPage();
  const lease: Lease = { context, page, cdp: await context.newCDPSession(page), origins: new Set(), javaScriptEnabled, reusable: true, idle: false };
  for (const target of [page, context] as unknown as Array<Record<string, unknown>>) {
    for (const method of LASTING) {
      const original = target[method] as (...args: unknown[]) => unknown;
      target[method] = (...args: unknown[]) => {
        lease.reusable = false;
        return original.apply(target, args);
      };
    }
  }
  const close = context.close.bind(context);
  context.close = () => givePageBack(browser, lease, close);
  return lease;
}

/**
 * Wipes the page as a new one would be and puts it back in the pool: its other tabs close, it goes
 * to about:blank, its listeners go, and the context loses its cookies, permissions, HTTP cache and
 * the storage of every origin it sent a request to (local storage, IndexedDB, service workers and
 * the rest). One that cannot be wiped so is closed instead.
 */
async function givePageBack(browser: Browser, lease: Lease, close: () => Promise<void>): Promise<void> {
  if (lease.idle) return;
  lease.idle = true;
  const { context, page, cdp } = lease;
  try {
    if (!lease.reusable || page.isClosed() || !browser.isConnected()) throw new Error('not reusable');
    await Promise.all(context.pages().map((other) => (other === page ? undefined : other.close())));
    await Promise.all([page.removeAllListeners(), context.removeAllListeners()]);
    await page.goto('about:blank');
    await Promise.all([
      context.clearCookies(),
      context.clearPermissions(),
      cdp.send('Network.clearBrowserCache'),
      ...[...lease.origins].map((origin) => cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })),
    ]);
    lease.origins.clear();
    idlePages(browser).push(lease);
  } catch {
    await close().catch(() => undefined);
  }
}

/** The newest e-mail to `to` in the outbox that arrived after `after` files, parsed. */
export async function mailTo(server: TestServer, to: string, options: { after?: number; timeoutMs?: number } = {}): Promise<ParsedMail & { file: string }> {
  const dir = join(server.dataDir, 'outbox');
  let files: string[] = [];
  const arrived = () => {
    files = outboxFiles(server)
      .filter((file) => file.includes(`-${to}-`))
      .slice(options.after ?? 0);
    return files.length > 0;
  };
  if (!(await waitUntil(arrived, options.timeoutMs ?? 5000))) throw new Error(`no e-mail to ${to} arrived`);
  const file = files[files.length - 1]!;
  return Object.assign(await simpleParser(readFileSync(join(dir, file))), { file });
}

/** The outbox's .eml files, oldest first. */
export function outboxFiles(server: TestServer): string[] {
  const dir = join(server.dataDir, 'outbox');
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.eml'))
      .sort((a, b) => statSync(join(dir, a)).mtimeMs - statSync(join(dir, b)).mtimeMs || a.localeCompare(b));
  } catch {
    return [];
  }
}

export const countMailTo = (server: TestServer, to: string): number => outboxFiles(server).filter((file) => file.includes(`-${to}-`)).length;

/** The first address in a mail's text part that starts with `prefix`. */
export function linkIn(mail: ParsedMail, prefix: string): string {
  const match = (mail.text ?? '').match(new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\S+`));
  if (!match) throw new Error(`no ${prefix} link in: ${mail.text}`);
  return match[0];
}

/**
 * Signs in through the real flow: the sign-in form, the e-mailed link, the button on its page.
 * Starts from wherever the page is if it is already on the sign-in form (after a redirect).
 */
export async function signIn(page: Page, server: AppServer, email: string): Promise<void> {
  if (!page.url().includes('/login')) await page.goto(`${server.appUrl}/login`);
  const before = countMailTo(server, email);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  // Playwright's wait, not expect.poll: in flows that run at the same time (describe.concurrent)
  // the global expect has no current test to poll in.
  await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  const mail = await mailTo(server, email, { after: before });
  await page.goto(linkIn(mail, `${server.appUrl}/login/verify?token=`));
  await page.getByRole('button', { name: `Sign in as ${email}` }).click();
  await page.waitForLoadState('load');
}

/**
 * Serious or critical axe-core violations on the page, as readable lines. A rule's violations
 * carry the impact its metadata gives it, so the rules whose impact is minor or moderate are not
 * run: they could only find what is filtered out below, and they were about a third of axe's rules.
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the page's strict CSP does not block it; once per
  // document (parsing it costs more than a run of its checks).
  let result = await page.evaluate(runAxe, REPORTED_IMPACTS);
  if (result === undefined) {
    await page.evaluate(AXE_SOURCE);
    result = await page.evaluate(runAxe, REPORTED_IMPACTS);
  }
  if (result === undefined) throw new Error('axe-core did not load');
  return result.violations
    .filter((violation) => REPORTED_IMPACTS.includes(violation.impact))
    .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
}

const REPORTED_IMPACTS = ['serious', 'critical'];

/** In the page: axe-core's violations among the rules of the `kept` impacts, or undefined before axe-core is loaded. */
async function runAxe(kept: string[]) {
  const axe = (
    globalThis as unknown as {
      axe?: {
        run: (
          context: Document,
          options: object,
        ) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }>;
        _audit?: { rules?: Array<{ id: string; impact?: string }> };
      };
    }
  ).axe;
  if (!axe) return undefined;
  const skipped = (axe._audit?.rules ?? []).filter((rule) => rule.impact !== undefined && !kept.includes(rule.impact));
  return axe.run(document, { resultTypes: ['violations'], rules: Object.fromEntries(skipped.map((rule) => [rule.id, { enabled: false }])) });
}

/**
 * Scrolling regions (`.table-wrap`) wider than their box, as `label: scrollWidth > clientWidth`. A
 * table that scrolls sideways inside its region keeps the page itself from overflowing, yet on a
 * phone half of each row is out of sight, so the narrow width counts it as overflow too.
 */
export async function overflowingRegions(page: Page): Promise<string[]> {
  return (await sidewaysOverflow(page)).regions;
}

/** How far the page scrolls sideways (px, 0 or less when it does not), and its overflowing regions (overflowingRegions), in one visit to the page. */
function sidewaysOverflow(page: Page): Promise<{ page: number; regions: string[] }> {
  return page.evaluate(() => ({
    page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    regions: [...document.querySelectorAll<HTMLElement>('.table-wrap')]
      .filter((region) => region.scrollWidth > region.clientWidth)
      .map((region) => `${region.getAttribute('aria-label') ?? '(unnamed region)'}: ${region.scrollWidth} > ${region.clientWidth}`),
  }));
}

/**
 * Whether inspectPage and saveScreenshot save screenshots (`TEST_SCREENSHOTS=1 npx vitest run …`).
 * They are for a person to look at and check nothing; two full-page captures per page cost 0.2–0.8 s each on a
 * busy machine (the account app's flows: 169 s of tests with them, 154 s without), so a plain run
 * leaves them out.
 */
const SAVE_SCREENSHOTS = process.env.TEST_SCREENSHOTS === '1';

/** Saves the page as it is now to test/screenshots/`name`.png, when asked to (SAVE_SCREENSHOTS). */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  if (!SAVE_SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await screenshot(page, { path: new URL(`${name}.png`, SCREENSHOTS).pathname });
}

/**
 * page.screenshot, asked again when Chromium answers "Unable to capture screenshot": headless
 * Chromium says so when its compositor had no frame ready in time, which a busy machine causes
 * now and then (seen once in a few hundred runs); the page itself is fine and the next capture works.
 */
export async function screenshot(page: Page, options: Parameters<Page['screenshot']>[0] = {}): Promise<Buffer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await page.screenshot(options);
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('Unable to capture screenshot')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

/**
 * Looks at the page as a person would at 390 px and 1280 px: checks accessibility and that
 * nothing overflows sideways at the narrow width, neither the page nor a table's scrolling region,
 * and saves a screenshot of each width when asked to (SAVE_SCREENSHOTS).
 */
export async function inspectPage(page: Page, name: string): Promise<void> {
  if (SAVE_SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 900 };
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    if (SAVE_SCREENSHOTS) await screenshot(page, { path: new URL(`${name}-${width}.png`, SCREENSHOTS).pathname, fullPage: true });
    expect(await accessibilityProblems(page), `${name} at ${width}px`).toEqual([]);
    if (width === 390) {
      const overflow = await sidewaysOverflow(page);
      expect(overflow.page, `${name} scrolls sideways at 390px`).toBeLessThanOrEqual(0);
      expect(overflow.regions, `${name}: tables that scroll sideways at 390px`).toEqual([]);
    }
  }
  if (original.width !== 1280 || original.height !== 900) await page.setViewportSize(original);
}
