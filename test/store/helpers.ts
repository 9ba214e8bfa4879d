import { afterAll, beforeAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, type AccountRecord, type FileEntry, type NewSite, type RevisionRecord, type SiteRecord, type Store } from '../../src/store/index.js';

/** Worker and child scripts import the built store; `npm test` builds it first. */
export const builtStore = fileURLToPath(new URL('../../dist/store/index.js', import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(builtStore)) throw new Error(`${builtStore} is missing: run npx tsc -p tsconfig.json first`);
}

export function fixture(name: string): URL {
  return new URL(`./fixtures/${name}`, import.meta.url);
}

/** A path-index row whose hash and size identify `marker`, so rows from different revisions differ. */
export function markedEntry(marker: number, type = 'text/plain'): FileEntry {
  return { sha256: marker.toString(16).padStart(64, '0'), size: marker, type };
}

export interface TestStore {
  store: Store;
  dir: string;
  /** The store's clock; tests move it. */
  clock: { now: number };
  close(): Promise<void>;
}

/**
 * The store a test file shares: opened before its tests, closed and removed after them. Its
 * fields are there once the tests run.
 */
export function useTestStore(prefix: string, startMs?: number): TestStore {
  const handle = {} as TestStore;
  beforeAll(async () => {
    Object.assign(handle, await openTestStore(prefix, startMs));
  });
  afterAll(() => handle.close());
  return handle;
}

/** A real store in a fresh temp dir, with a clock the test moves. */
export async function openTestStore(prefix: string, startMs = Date.UTC(2030, 0, 1)): Promise<TestStore> {
  const dir = await mkdtemp(join(tmpdir(), `plinth-store-${prefix}-`));
  const clock = { now: startMs };
  const store = openStore({ dir, now: () => clock.now });
  return {
    store,
    dir,
    clock,
    async close() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a site with one revision; `files` defaults to a single marked index page. */
export async function createSite(
  store: Store,
  name: string,
  site: Partial<NewSite> = {},
  files: [string, FileEntry][] = [['/index.html', markedEntry(1)]],
): Promise<{ site: SiteRecord; revision: RevisionRecord }> {
  const result = await store.commitRevision({
    site: name,
    create: { name, plan: 'free', claimed: true, ...site },
    baseRevision: null,
    files: new Map(files),
    kind: 'deploy',
    createdBy: site.accountId ?? 'admin',
  });
  if (!result.ok) throw new Error(`create ${name} failed: ${result.reason}`);
  return result;
}

/** Deploys a new live revision of an existing site on top of its live one. */
export async function deploySite(store: Store, name: string, files: [string, FileEntry][]): Promise<RevisionRecord> {
  const result = await store.commitRevision({
    site: name,
    baseRevision: store.getSite(name)?.liveRevision ?? null,
    files: new Map(files),
    kind: 'deploy',
    createdBy: 'admin',
  });
  if (!result.ok) throw new Error(`deploy ${name} failed: ${result.reason}`);
  return result.revision;
}

/** Creates an account or fails the test. */
export async function createAccount(store: Store, email: string, plan: AccountRecord['plan'] = 'free'): Promise<AccountRecord> {
  const account = await store.createAccount({ email, plan });
  if (!account) throw new Error(`account ${email} exists`);
  return account;
}
