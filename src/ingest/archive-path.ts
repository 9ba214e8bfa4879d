// Pure rules for the file names found in a deploy (tar, zip or inline JSON entries), SPEC 4.1
// rules 2 and 4. Nothing here touches the disk: blobs are content-addressed, so a path is only
// ever a key, but the same names are later written by the CLI and shown to users, so anything
// that could mean "somewhere else" on some operating system is refused rather than repaired.

import { isSkippedPath, MAX_PATH_BYTES } from '../rules/index.js';

export type ArchivePathResult = { ok: true; path: string } | { ok: false; reason: string };

export { MAX_PATH_BYTES };
// The common file-system limit for one name (ext4, APFS, NTFS in UTF-16 units is close).
export const MAX_SEGMENT_BYTES = 255;

// C0 controls, DEL and C1 controls: NUL truncates names in C code, the rest can hide text in logs.
const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f]/;
// A lone surrogate cannot be encoded as UTF-8, so its byte length and LMDB key would be garbage.
const LONE_SURROGATE = /\p{Cs}/u;
// `C:\x`, `C:/x` and the drive-relative `c:x`.
const WINDOWS_DRIVE = /^[A-Za-z]:/;

export function checkArchivePath(rawPath: string): ArchivePathResult {
  const shown = JSON.stringify(rawPath);
  const reject = (why: string): ArchivePathResult => ({ ok: false, reason: `Path ${shown} ${why}` });

  if (rawPath === '') return { ok: false, reason: 'An entry has an empty path.' };
  if (CONTROL_CHAR.test(rawPath)) return reject('contains a control character such as NUL or a line break.');
  if (LONE_SURROGATE.test(rawPath)) return reject('is not valid Unicode text.');
  if (/^(?:\\\\|\/\/|\\\/|\/\\)/.test(rawPath)) return reject('is a network (UNC) path.');
  if (WINDOWS_DRIVE.test(rawPath)) return reject('starts with a Windows drive letter.');
  if (rawPath.startsWith('/') || rawPath.startsWith('\\')) return reject('is absolute; paths must be relative to the site folder.');
  // Judge traversal with `\` as a separator too: Windows tools and zip writers treat it as one.
  if (rawPath.split(/[/\\]/).includes('..')) return reject('climbs out of the site folder with "..".');
  // Refused rather than converted: one archive must not mean different files on different systems.
  if (rawPath.includes('\\')) return reject('contains a backslash; use "/" between folders.');

  // Percent escapes are deliberately not decoded: in an archive `%2e` is a literal file name.
  const segments = rawPath.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.length === 0) return reject('names no file.');
  const path = segments.join('/');

  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) {
    return reject(`is longer than ${MAX_PATH_BYTES} bytes.`);
  }
  if (segments.some((segment) => Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES)) {
    return reject(`has a file or folder name longer than ${MAX_SEGMENT_BYTES} bytes.`);
  }
  return { ok: true, path };
}

// What a case-insensitive file system (macOS, Windows) would treat as the same name: NFC makes a
// macOS-decomposed `é` equal to the composed one; upper-then-lower approximates full case folding
// (`ß` → `SS` → `ss`, final `ς` → `Σ` → `σ`, Kelvin sign → `k`).
function foldName(path: string): string {
  return path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

// Returns the first pair of paths that collide apart from letter case or Unicode form. Identical
// paths count as a pair too: an archive holding one name twice is ambiguous (tools disagree on
// which copy wins), so callers should pass each entry's path, not a deduplicated set.
export function findCaseDuplicate(paths: Iterable<string>): [string, string] | undefined {
  const seen = new Map<string, string>();
  for (const path of paths) {
    const key = foldName(path);
    const earlier = seen.get(key);
    if (earlier !== undefined) return [earlier, path];
    seen.set(key, path);
  }
  return undefined;
}

export interface StrippedPaths {
  prefix: string | undefined;
  paths: string[];
}

// SPEC 4.1 rule 2: when every published file sits under one top-level folder (the usual "zip the
// folder" archive), that folder is removed. Paths that will be skipped anyway (`__MACOSX/`,
// `.DS_Store`, `.git/` next to the folder) do not take part in the decision, because they never
// reach the site; they are returned unchanged when outside the folder. The stripped folder is never
// a skipped one, so skipping gives the same answer before and after. Only one level is stripped,
// `.well-known` is never stripped (it only means something at the root), and a lone file at the
// root means no strip. Input paths are already normalised by `checkArchivePath`.
export function stripCommonTopFolder(paths: string[]): StrippedPaths {
  let top: string | undefined;
  for (const path of paths) {
    if (isSkippedPath(path)) continue;
    const slash = path.indexOf('/');
    if (slash === -1) return { prefix: undefined, paths };
    const folder = path.slice(0, slash);
    if (top === undefined) top = folder;
    else if (folder !== top) return { prefix: undefined, paths };
  }
  if (top === undefined || top.toLowerCase() === '.well-known') return { prefix: undefined, paths };
  const prefix = `${top}/`;
  return {
    prefix,
    paths: paths.map((path) => (path.startsWith(prefix) ? path.slice(prefix.length) : path)),
  };
}
