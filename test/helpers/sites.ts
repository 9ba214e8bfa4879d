import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentTypeFor, isCompressibleType } from '../../src/rules/index.js';
import type { FileEntry, NewSite, Plan, Store } from '../../src/store/index.js';

export function tempDir(prefix = 'plinth-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A fresh data directory for a test server: under the run's folder on tmpfs when
 * test/global-setup.ts made one (TEST_DATA_ROOT), else a temporary folder like any other.
 */
export function serverDataDir(): string {
  const root = process.env.TEST_DATA_ROOT;
  return root ? mkdtempSync(join(root, 'plinth-test-')) : tempDir();
}

export type SiteFiles = Record<string, string | Buffer>;

/** Stores the files as blobs (with precompressed variants unless `compress` is false) and returns the path index. */
export async function storeFiles(store: Store, files: SiteFiles, options: { compress?: boolean } = {}): Promise<Map<string, FileEntry>> {
  const entries = new Map<string, FileEntry>();
  for (const [path, content] of Object.entries(files)) {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    const type = contentTypeFor(path);
    entries.set(path, await store.blobs.putFile(bytes, type, { compress: options.compress !== false && isCompressibleType(type) }));
  }
  return entries;
}

/** Publishes a new site through the store (the REST deploy path arrives with the deploy issue). */
export async function publishSite(
  store: Store,
  name: string,
  files: SiteFiles,
  site: Partial<NewSite> & { plan?: Plan } = {},
  options: { compress?: boolean } = {},
): Promise<{ revision: string; files: Map<string, FileEntry> }> {
  const entries = await storeFiles(store, files, options);
  const result = await store.commitRevision({
    site: name,
    create: { name, plan: site.plan ?? 'builder', claimed: site.claimed ?? true, ...site },
    baseRevision: null,
    files: entries,
    kind: 'deploy',
    createdBy: 'admin',
  });
  if (!result.ok) throw new Error(`publish failed: ${result.reason}`);
  return { revision: result.revision.id, files: entries };
}
