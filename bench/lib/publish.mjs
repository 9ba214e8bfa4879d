// Publishes corpus sites straight into Plinth's store (no HTTP): putFile per file, one commit per site.
import { pathToFileURL } from 'node:url';
import { extname, join } from 'node:path';

// Used only until dist/rules/index.js exists; mirrors the allowlist's answers for the corpus types.
const FALLBACK_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

// Precompressing random PNG bytes only burns time; Plinth serves identity anyway without Accept-Encoding.
const fallbackCompressible = (type) => /^text\/|javascript|json|svg|xml/.test(type);

/** Plinth's own content-type rules when built, else the fallback. Returns {typeOf, isCompressible, source}. */
export async function loadContentTypes(root) {
  try {
    const mod = await import(pathToFileURL(join(root, 'dist/rules/index.js')).href);
    if (typeof mod.contentTypeFor === 'function' && typeof mod.contentTypeFor('a.html') === 'string') {
      const isCompressible = typeof mod.isCompressibleType === 'function' ? (t) => mod.isCompressibleType(t) : fallbackCompressible;
      return { typeOf: (path) => mod.contentTypeFor(path), isCompressible, source: 'dist/rules/index.js' };
    }
  } catch {
    /* not built yet */
  }
  return { typeOf: (path) => FALLBACK_TYPES[extname(path)] ?? 'application/octet-stream', isCompressible: fallbackCompressible, source: 'bench fallback map' };
}

/**
 * Opens the store in `dataDir`; `publish(name, files)` commits a new 'builder' site (no badge).
 * With `cluster` ({ databaseUrl, bucket }: the store options of a cluster), `dataDir` is an
 * operator's replica, as `plinth admin` opens one: records go to PostgreSQL and blobs into the
 * bucket before the commit, the order a deploy keeps. `store` is the open store.
 */
export async function openPublisher(root, dataDir, { typeOf, isCompressible }, cluster) {
  const { openStore, connectStore } = await import(pathToFileURL(join(root, 'dist/store/index.js')).href);
  const store = cluster ? await connectStore({ dir: dataDir, bootstrap: true, ...cluster }) : openStore({ dir: dataDir });
  return {
    store,
    async publish(name, files) {
      const entries = new Map();
      for (const [path, bytes] of files) {
        const type = typeOf(path);
        entries.set(path, await store.blobs.putFile(bytes, type, { compress: isCompressible(type) }));
      }
      // No-op without a bucket.
      await store.blobs.publish(Array.from(entries.values(), (entry) => entry.sha256));
      const result = await store.commitRevision({
        site: name,
        create: { name, plan: 'builder', claimed: true },
        baseRevision: null,
        files: entries,
        kind: 'deploy',
        createdBy: 'admin',
      });
      if (!result.ok) throw new Error(`commit of ${name} failed: ${result.reason}`);
      return result;
    },
    close: () => store.close(),
  };
}

/** Runs `fn` over `items` with at most `limit` in flight (overlaps blob fsyncs and LMDB commits). */
export async function mapLimit(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
