/**
 * Pure rules about paths inside a published site, shared by ingest (what to skip at deploy time)
 * and serve (what is never served, even if it somehow got into a revision).
 * Paths here are relative, `/`-separated, with no leading slash.
 */

/**
 * The longest path a site may hold, in UTF-8 bytes. Its LMDB key is `[revisionId, path]`, which
 * must stay under 1,978 bytes: 1,024 leaves room. No longer path can be found in a revision.
 */
export const MAX_PATH_BYTES = 1024;

const SKIPPED_FILE_NAMES = new Set(['.ds_store', 'thumbs.db']);
// `__MACOSX/` holds the resource forks the macOS Finder adds to every zip it makes.
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules', '__macosx']);
const SKIPPED_SUFFIXES = ['.map', '.pem', '.key'];

/**
 * True when a path is dropped at deploy time and never served: `.git/`, `node_modules/` and
 * `__MACOSX/` at any depth, `.env*`, `*.map`, `*.pem`, `*.key`, any dotfile or dot-folder except
 * `.well-known/`, `.DS_Store` and `Thumbs.db`. Matching ignores letter case, because the
 * archive may come from a case-insensitive file system where `.GIT/` is the same folder.
 */
export function isSkippedPath(path: string): boolean {
  // Ingest rejects `\`, so it never appears in a stored path; splitting on it anyway means a
  // decoded request such as `a\.env` is still judged by its last real name.
  const segments = path.split(/[/\\]/);
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = segments[i]!.toLowerCase();
    if (i < last && SKIPPED_FOLDERS.has(segment)) return true;
    if (segment.startsWith('.')) {
      // `.well-known/` is the one dot-folder a site needs (ACME, security.txt, app links).
      if (segment === '.well-known' && i < last) continue;
      return true;
    }
  }
  const name = segments[last]!.toLowerCase();
  if (SKIPPED_FILE_NAMES.has(name)) return true;
  return SKIPPED_SUFFIXES.some((suffix) => name.endsWith(suffix));
}
