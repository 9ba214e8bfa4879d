// What the chaos and soak harnesses believe each site serves: every acknowledged revision with its
// exact files, plus the one operation that may be in flight when the server is killed. Files are
// generated from a seeded generator, so a run can be replayed from its seed.
import { createHash } from 'node:crypto';

export type FileSet = Map<string, Buffer>;

export interface RevisionModel {
  id: string;
  number: number;
  files: FileSet;
}

export interface SiteModel {
  name: string;
  /** `builder`: made with the account token (no badge); `anonymous`: updated with its site token. */
  kind: 'builder' | 'anonymous';
  token: string;
  /** Acknowledged revisions, oldest first; the last is the one the site must serve. */
  revisions: RevisionModel[];
  /** An operation sent but not answered when the server died: it may or may not have committed. */
  pending?: FileSet;
  busy: boolean;
}

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** xorshift32: small, fast, reproducible. */
export function randomSource(seed: number) {
  let state = seed >>> 0 || 0x9e3779b9;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number): number => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number): boolean => next() < p,
    bytes(length: number): Buffer {
      const out = Buffer.alloc(length);
      for (let i = 0; i + 4 <= length; i += 4) out.writeUInt32LE((next() * 4294967296) >>> 0, i);
      return out;
    },
  };
}

export type Random = ReturnType<typeof randomSource>;

const WORDS = 'plinth site page deploy archive blob revision serve cache commit sweep visitor agent folder'.split(' ');

function words(random: Random, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += `${random.pick(WORDS)} `;
  return out;
}

/**
 * A fresh set of files for a site: an index page (no `</body>`, so a badge is appended after the
 * original bytes), a few text and binary files in folders, sometimes one large incompressible
 * file so that uploads take long enough to be cut.
 */
export function generateFiles(random: Random, tag: string, options: { maxFiles: number; bigFileBytes?: number }): FileSet {
  const files: FileSet = new Map();
  files.set('index.html', Buffer.from(`<!doctype html><title>${tag}</title><h1>${tag}</h1><p>${words(random, 40)}</p>\n`));
  const count = random.int(1, options.maxFiles - 1);
  for (let i = 0; i < count; i++) {
    const kind = random.int(0, 3);
    if (kind === 0) files.set(`pages/p${i}.html`, Buffer.from(`<p>${tag} ${i} ${words(random, random.int(5, 400))}</p>\n`));
    else if (kind === 1) files.set(`assets/s${i}.css`, Buffer.from(`/* ${tag} */ .c${i} { margin: ${random.int(0, 99)}px }\n`.repeat(random.int(1, 200))));
    else if (kind === 2) files.set(`data/d${i}.json`, Buffer.from(JSON.stringify({ tag, i, text: words(random, random.int(1, 100)) })));
    else files.set(`img/i${i}.bin`, binary(random, random.int(16, 40_000)));
  }
  if (options.bigFileBytes) files.set('big/blob.bin', binary(random, options.bigFileBytes));
  return files;
}

/** Random bytes behind a fixed marker, so no file looks like an executable to the anonymous-deploy check. */
function binary(random: Random, length: number): Buffer {
  const bytes = random.bytes(Math.max(length, 8));
  bytes.write('BIN\0', 0, 'latin1');
  return bytes;
}

/** `base` with some files changed or added, and some deleted (never index.html). */
export function patchFiles(random: Random, base: FileSet, tag: string): { files: FileSet; changed: FileSet; deleted: string[] } {
  const files: FileSet = new Map(base);
  const changed: FileSet = new Map();
  const deleted: string[] = [];
  for (const path of base.keys()) {
    if (path !== 'index.html' && random.chance(0.2)) {
      files.delete(path);
      deleted.push(path);
    }
  }
  const edits = random.int(1, 3);
  for (let i = 0; i < edits; i++) {
    const path = i === 0 ? 'index.html' : `patched/${tag}-${i}.txt`;
    const content = Buffer.from(path === 'index.html' ? `<!doctype html><h1>${tag}</h1><p>${words(random, 30)}</p>\n` : `${tag} ${words(random, 20)}\n`);
    files.set(path, content);
    changed.set(path, content);
  }
  return { files, changed, deleted };
}

/** path → sha256, for comparing a file listing with a model's files. */
export function hashes(files: FileSet): Map<string, string> {
  return new Map([...files].map(([path, bytes]) => [path, sha256(bytes)]));
}

export function sameHashes(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, hash] of a) if (b.get(path) !== hash) return false;
  return true;
}
