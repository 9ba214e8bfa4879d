// The leak guard (SPEC 4.1 rule 6) for one file: the bytes as they are, and what they decompress
// to, each decoded as text (text-encoding.ts) and scanned (secrets.ts). A key in `config.js.gz`,
// `logo.svgz` or a gzip file without an extension is published as surely as one in plain text:
// anyone who downloads it can unpack it. Runs in the ingest worker, on bytes already in memory.
import { brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import { DeployRejected, expandedSiteTooLarge, expandsTooLarge, uncheckableCompressedFile } from './rejection.js';
import { scanAllSecrets } from './secrets.js';
import { decodeText } from './text-encoding.js';

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
  line: number;
  kind: string;
  /** Found in what the file decompresses to; `line` is a line of that text. */
  compressed: boolean;
}

/** Findings one deploy reports at most: enough to fix in one go, bounded for a hostile archive. */
export const MAX_SECRET_FINDINGS = 50;

export interface LeakGuard {
  /**
   * The file's secret keys, in order (none: an empty list), counting towards the deploy's
   * `MAX_SECRET_FINDINGS`. Throws `DeployRejected` for a compressed file too large to scan or gzip
   * data that cannot be read.
   */
  check(path: string, bytes: Uint8Array): SecretHit[];
}

// gzip by its magic bytes and deflate method (RFC 1952), whatever the file is called.
function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0x1f && bytes[1] === 0x8b && bytes[2] === 8;
}

// Brotli has no magic bytes, so only the name tells.
const isBrotliName = (path: string): boolean => /\.br$/i.test(path);

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

  function check(path: string, bytes: Uint8Array): SecretHit[] {
    const hits: SecretHit[] = [];
    const scan = (content: Uint8Array, compressed: boolean): void => {
      const text = decodeText(content);
      // Past the cap a file is still unpacked (a bad layer must still be refused) but not scanned.
      if (text === undefined || found >= MAX_SECRET_FINDINGS) return;
      for (const finding of scanAllSecrets(text, MAX_SECRET_FINDINGS - found)) {
        // A short brotli stream may hold its text as it is: the same key then shows in the raw
        // bytes and in what they decompress to, and is one finding.
        if (hits.some((hit) => hit.line === finding.line && hit.kind === finding.kind)) continue;
        found++;
        hits.push({ ...finding, compressed });
      }
    };
    let content = bytes;
    let layers = 0;
    if (!isGzip(content)) scan(content, false);
    if (isBrotliName(path)) {
      const inner = unbrotli(path, content);
      if (inner !== undefined) {
        content = inner;
        layers++;
        if (!isGzip(content)) scan(content, true);
      }
    }
    while (isGzip(content)) {
      if (layers === MAX_LAYERS) throw uncheckableCompressedFile(path, 'is compressed more than twice (gzip inside gzip)');
      content = gunzip(path, content);
      layers++;
      if (!isGzip(content)) scan(content, true);
    }
    return hits;
  }

  return { check };
}
