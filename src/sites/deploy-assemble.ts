import { ServiceError } from '../errors.js';
import { isBrotliName, type FileReference, type RejudgedContent, type UnpackResult } from '../ingest/index.js';
import { PLAN_LIMITS } from '../rules/index.js';
import type { FileEntry, Store } from '../store/index.js';
import type { Decision } from './deploy-decision.js';
import type { OperationsDeps } from './deps.js';
import { checkTier, compactEntry } from './limits.js';
import { entryAt, reusableContents } from './manifest.js';

/** What the ingest worker hands back for a body it accepted. */
export type Unpacked = Extract<UnpackResult, { ok: true }>;

/** The complete file set of the new revision, checked against the target site's tier. */
export function assembleFiles(
  deps: Pick<OperationsDeps, 'store' | 'now'>,
  decision: Decision,
  result: Pick<Unpacked, 'files' | 'references'>,
  deleted: readonly string[] | undefined,
): Map<string, FileEntry> {
  const { store } = deps;
  const files = new Map<string, FileEntry>();
  if (deleted !== undefined && decision.mode === 'update') {
    for (const file of store.listFiles(decision.base)) files.set(file.path, compactEntry(file));
    for (const path of deleted) {
      if (!files.delete(path)) {
        throw new ServiceError('bad_request', `Cannot delete ${path}: the base revision has no such file.`, { details: { file: path } });
      }
    }
  }
  for (const file of result.files) files.set(file.path, compactEntry(file));
  for (const [path, entry] of resolveReferences(deps, decision, result.references ?? [])) files.set(path, entry);

  checkTier(files, PLAN_LIMITS[decision.mode === 'create' ? decision.plan : decision.site.plan]);
  if (!files.has('index.html')) {
    throw new ServiceError('bad_request', 'The site has no index.html at its root.', {
      agentMessage: 'Every site needs an index.html at the top level of the upload (or inside its single top-level folder).',
    });
  }
  return files;
}

/**
 * Files sent by size and sha256 only (a one-request digest deploy): each must be content of
 * this site's own recent revisions, so a reference never confirms what others have stored.
 */
function resolveReferences(
  { store, now }: Pick<OperationsDeps, 'store' | 'now'>,
  decision: Decision,
  references: readonly FileReference[],
): Map<string, FileEntry> {
  const entries = new Map<string, FileEntry>();
  if (references.length === 0) return entries;
  const known = decision.mode === 'update' ? reusableContents(store, decision.site, now()) : {};
  const missing: string[] = [];
  for (const reference of references) {
    const had = known[reference.sha256];
    if (!had) {
      missing.push(reference.path);
      continue;
    }
    if (had.size !== reference.size) {
      throw new ServiceError('bad_request', `${reference.path}: size ${reference.size} does not match the content with that sha256 (${had.size} bytes).`, {
        details: { file: reference.path },
      });
    }
    entries.set(reference.path, entryAt(reference.path, reference.sha256, had));
  }
  if (missing.length > 0) {
    const shown = missing.slice(0, 10).join(', ');
    throw new ServiceError('bad_request', `${missing.length} files were sent by sha256 only, but this site has no such content, for example ${missing[0]}.`, {
      agentMessage: `Send these files with their content instead of sha256 and size: ${shown}${missing.length > 10 ? ` and ${missing.length - 10} more` : ''}. Only contents of this site's own recent revisions can be sent by sha256.`,
      details: { file: missing[0], missing: missing.slice(0, 100) },
    });
  }
  return entries;
}

/**
 * Reused contents (sent by sha256, or kept by a manifest) that the new revision publishes at a
 * path the leak guard reads differently from its name when it was checked, a `.br` path: each
 * is read again as those paths before anything is published. One the base revision already has
 * at that very path was judged as it then, so a redeploy of unchanged files reads nothing again.
 */
export function contentsToRejudge(
  store: Pick<Store, 'getFile'>,
  base: string | undefined,
  files: Iterable<{ path: string; sha256: string }>,
): RejudgedContent[] {
  const paths = new Map<string, string[]>();
  for (const file of files) {
    if (!isBrotliName(file.path)) continue;
    if (base !== undefined && store.getFile(base, file.path)?.sha256 === file.sha256) continue;
    const list = paths.get(file.sha256) ?? [];
    paths.set(file.sha256, list);
    list.push(file.path);
  }
  return Array.from(paths, ([sha256, list]) => ({ sha256, paths: list }));
}
