import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { busyContexts, sharedBrowser, startAppServer, type AppServer } from '../app/browser.js';
import { startTestDns, type TestDns } from './dns.js';
import { startTestServer, type TestServer } from './server.js';

/**
 * Shared fixtures: one server, browser or DNS server per test file (or per `describe`, when called
 * inside one), started before its first test and closed after its last (waiting for a state is
 * ./wait.ts's `waitUntil`). A file writes `const server = useTestServer()` instead of a `let`, a
 * `beforeAll` that starts and an `afterAll` that closes. Fixtures start in the order they are
 * declared and close in the reverse order, so a server may use a DNS server declared before it.
 */

type Settings = Record<string, string> | (() => Record<string, string>);
type StartOptions = { now?: () => number } & Parameters<typeof startTestServer>[2];

/**
 * Stands for the object `start` gives in `beforeAll`: reading it before then throws, and its
 * methods run on the object itself (so private state and `this` work).
 */
function fileScoped<T extends object>(what: string, start: () => Promise<T>, stop: (value: T) => Promise<unknown>): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  });
  afterAll(async () => {
    if (value !== undefined) await stop(value);
  });
  const current = (): T => {
    if (value === undefined) throw new Error(`the ${what} starts in beforeAll: use it inside a hook or a test`);
    return value;
  };
  return new Proxy({} as T, {
    get: (_target, key) => {
      const target = current();
      const field = Reflect.get(target, key, target) as unknown;
      return typeof field === 'function' ? (field as (...args: unknown[]) => unknown).bind(target) : field;
    },
    set: (_target, key, value) => Reflect.set(current(), key, value),
    has: (_target, key) => Reflect.has(current(), key),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}

const settingsOf = (settings: Settings): Record<string, string> => (typeof settings === 'function' ? settings() : settings);

/** A real server for this file (startTestServer); `settings` may be a function read when it starts. */
export function useTestServer(settings: Settings = {}, options: StartOptions = {}): TestServer {
  const { now, ...extra } = options;
  return fileScoped(
    'server',
    () => startTestServer(settingsOf(settings), now, extra),
    (server) => server.close(),
  );
}

/** A real server for this file on a port chosen up front, with the app, API and site addresses (startAppServer). */
export function useAppServer(settings: Settings = {}, options: StartOptions = {}): AppServer {
  const { now, ...extra } = options;
  return fileScoped(
    'server',
    () => startAppServer(settingsOf(settings), now, extra),
    (server) => server.close(),
  );
}

/**
 * Debian's Chromium for this file (or `describe`): the worker's shared one (sharedBrowser), so
 * that a file pays for no launch of its own. At the end it closes the browser contexts opened
 * since it started, whatever its cases left open (openPage's go back to its pool).
 */
export function useBrowser(): Browser {
  let before = new Set<BrowserContext>();
  return fileScoped(
    'browser',
    async () => {
      const browser = await sharedBrowser();
      before = new Set(busyContexts(browser));
      return browser;
    },
    (browser) =>
      Promise.all(
        busyContexts(browser)
          .filter((context) => !before.has(context))
          .map((context) => context.close()),
      ),
  );
}

/** A DNS server on loopback for this file (startTestDns), for PLINTH_DNS_SERVERS. */
export function useTestDns(): TestDns {
  return fileScoped('DNS server', startTestDns, (dns) => dns.close());
}
