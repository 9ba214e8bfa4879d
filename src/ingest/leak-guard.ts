// The leak guard (SPEC 4.1 rule 6) for one file: the bytes as they are, and what they decompress
// to, each decoded as text (text-encoding.ts) and scanned (secrets.ts). A key in `config.js.gz`,
// `logo.svgz` or a gzip file without an extension is published as surely as one in plain text:
// anyone who downloads it can unpack it. Runs in the ingest worker, on bytes already in memory.
//
// Only brotli depends on the name (it has no magic bytes), so the same bytes may read differently
// at two paths: `x.bin` and `config.js.br`. Bytes are judged as every path they are published at,
// which is not always the name they arrived under (a manifest's part, content reused by sha256).
import { brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import { DeployRejected, expandedSiteTooLarge, expandsTooLarge, secretsFound, uncheckableCompressedFile } from './rejection.js';
import { scanAllSecrets } from './secrets.js';
import { decodeText } from './text-encoding.js';
import type { RejudgedContent } from './types.js';

// A file and one compressed file inside it (`a.js.gz.gz`, a `.br` holding gzip data) are
// unwrapped. A third layer of gzip is refused rather than published unscanned: no tool makes one
// by accident.
const MAX_LAYERS = 2;

export interface LeakGuardOptions {
  /** What one compressed file may expand to: the per-file limit, as if it had been sent uncompressed. */
  maxFileBytes: number;
  /** What the compressed files of one deploy may expand to together: the deploy's site limit. */
  maxExpandedBytes: number;
}

/** A secret key in a file: where, and which kind (never the key). */
export interface SecretHit {
  /** The published path it was found at. */
  file: string;
  line: number;
  kind: string;
  /** Found in what the file decompresses to; `line` is a line of that text. */
  compressed: boolean;
}

/** Findings one deploy reports at most: enough to fix in one go, bounded for a hostile archive. */
export const MAX_SECRET_FINDINGS = 50;

export interface LeakGuard {
  /**
   * The secret keys in `bytes` as published at `paths` (one path, or every path the same bytes are
   * published at), per path in order (none: an empty list), counting towards the deploy's
   * `MAX_SECRET_FINDINGS`. Throws `DeployRejected` for a compressed file too large to scan or gzip
   * data that cannot be read.
   */
  check(paths: string | readonly string[], bytes: Uint8Array): SecretHit[];
}

// gzip by its magic bytes and deflate method (RFC 1952), whatever the file is called.
function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0x1f && bytes[1] === 0x8b && bytes[2] === 8;
}

/** Brotli has no magic bytes, so only the name tells: a path the leak guard reads as brotli. */
export const isBrotliName = (path: string): boolean => /\.br$/i.test(path);

const isTooLarge = (err: unknown): boolean => (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';

export function createLeakGuard(options: LeakGuardOptions): LeakGuard {
  let expandedBytes = 0;
  let found = 0;

  // How much the next decompression may produce, and the refusal for going past it. zlib stops
  // at `maxOutputLength`, so a bomb costs no more than the limit.
  function allowance(path: string): { bytes: number; refuse: () => DeployRejected } {
    const left = options.maxExpandedBytes - expandedBytes;
    return options.maxFileBytes <= left
      ? { bytes: options.maxFileBytes, refuse: () => expandsTooLarge(path, options.maxFileBytes) }
      : { bytes: left, refuse: () => expandedSiteTooLarge(path, options.maxExpandedBytes) };
  }

  function expand(path: string, decompress: (maxOutputLength: number) => Buffer): Buffer {
    const allowed = allowance(path);
    let out: Buffer;
    try {
      out = decompress(Math.max(1, allowed.bytes));
    } catch (err) {
      if (isTooLarge(err)) throw allowed.refuse();
      throw err;
    }
    if (out.byteLength > allowed.bytes) throw allowed.refuse();
    expandedBytes += out.byteLength;
    return out;
  }

  function gunzip(path: string, bytes: Uint8Array): Buffer {
    return expand(path, (maxOutputLength) => {
      try {
        // Every member of a multi-member file. A truncated file gives what it holds (as `zcat`
        // would) instead of an error; damaged data or trailing garbage cannot be read to the
        // end, so it is refused rather than published half checked.
        return gunzipSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength });
      } catch (err) {
        if (isTooLarge(err)) throw err;
        throw uncheckableCompressedFile(path, `holds gzip data that cannot be decompressed (${(err as Error).message})`);
      }
    });
  }

  // Undefined when the bytes are not brotli: a file may be called `.br` for other reasons, and its
  // raw bytes are scanned anyway.
  function unbrotli(path: string, bytes: Uint8Array): Buffer | undefined {
    try {
      return expand(path, (maxOutputLength) => brotliDecompressSync(bytes, { finishFlush: constants.BROTLI_OPERATION_FLUSH, maxOutputLength }));
    } catch (err) {
      if (err instanceof DeployRejected) throw err;
      return undefined;
    }
  }

  type Finding = Omit<SecretHit, 'file'>;

  // The findings of one decoded view, at most what the deploy may still report.
  function scan(content: Uint8Array, compressed: boolean, into: Finding[]): void {
    const text = decodeText(content);
    // Past the cap a file is still unpacked (a bad layer must still be refused) but not scanned.
    if (text === undefined || found >= MAX_SECRET_FINDINGS) return;
    for (const finding of scanAllSecrets(text, MAX_SECRET_FINDINGS - found)) into.push({ ...finding, compressed });
  }

  // `content` and the gzip layers inside it, `layers` of compression already taken off.
  function scanLayers(path: string, content: Uint8Array, layers: number, compressed: boolean): Finding[] {
    const findings: Finding[] = [];
    if (!isGzip(content)) scan(content, compressed, findings);
    while (isGzip(content)) {
      if (layers === MAX_LAYERS) throw uncheckableCompressedFile(path, 'is compressed more than twice (gzip inside gzip)');
      content = gunzip(path, content);
      layers++;
      if (!isGzip(content)) scan(content, true, findings);
    }
    return findings;
  }

  function check(published: string | readonly string[], bytes: Uint8Array): SecretHit[] {
    const paths = typeof published === 'string' ? [published] : [...new Set(published)];
    // A `.br` path whose bytes are brotli reads as the bytes and what they expand to; every other
    // path (and a `.br` one that is not brotli after all) as the bytes and any gzip inside them.
    // Each view is decoded once, however many paths share it.
    const raw: Finding[] = [];
    if (!isGzip(bytes)) scan(bytes, false, raw);
    const brotliPath = paths.find(isBrotliName);
    const inner = brotliPath === undefined ? undefined : unbrotli(brotliPath, bytes);
    const asBrotli = inner === undefined ? undefined : [...raw, ...scanLayers(brotliPath!, inner, 1, true)];
    let asIs: Finding[] | undefined;
    const hits: SecretHit[] = [];
    for (const path of paths) {
      const view = asBrotli !== undefined && isBrotliName(path) ? asBrotli : (asIs ??= isGzip(bytes) ? scanLayers(path, bytes, 0, false) : raw);
      const seen = new Set<string>();
      for (const finding of view) {
        // A short brotli stream may hold its text as it is: the same key then shows in the raw
        // bytes and in what they decompress to, and is one finding.
        const key = `${finding.line} ${finding.kind}`;
        if (seen.has(key) || found >= MAX_SECRET_FINDINGS) continue;
        seen.add(key);
        found++;
        hits.push({ file: path, ...finding });
      }
    }
    return hits;
  }

  return { check };
}

/**
 * Stored contents judged as the paths they will now be published at, with the limits of the
 * deploy that publishes them. Throws `DeployRejected`: `blocked_secret` naming every key, or the
 * refusal of a compressed file that cannot be checked.
 */
export function rejudgeContents(
  contents: readonly RejudgedContent[],
  read: (sha256: string) => Uint8Array,
  limits: { maxFileBytes: number; maxSiteBytes: number },
): void {
  const guard = createLeakGuard({ maxFileBytes: limits.maxFileBytes, maxExpandedBytes: limits.maxSiteBytes });
  const hits: SecretHit[] = [];
  for (const content of contents) hits.push(...guard.check(content.paths, read(content.sha256)));
  if (hits.length > 0) throw secretsFound(hits, MAX_SECRET_FINDINGS);
}
