import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { injectBadge, type BadgeOptions } from './inject.js';

/** A page with its badge, and its compressed forms when they are smaller; ETags from the bytes. */
export interface BadgedPage {
  identity: { bytes: Buffer; etag: string };
  br?: { bytes: Buffer; etag: string };
  gzip?: { bytes: Buffer; etag: string };
}

/** Badged pages up to this size are compressed too; larger ones go out uncompressed. */
export const MAX_BADGE_COMPRESS_BYTES = 2 * 1024 * 1024;

/**
 * Builds what serving sends for a page of a site with a badge: placing the badge parses the page
 * (up to a few parses for hostile markup), then br and gzip forms. CPU work of up to a second for
 * a 5 MB page, so serving runs it in a worker thread for all but small pages.
 */
export function buildBadgedPage(source: Buffer, options: BadgeOptions & { compress: boolean }): BadgedPage {
  const bytes = injectBadge(source, options);
  const hash = createHash('sha256').update(bytes).digest('hex');
  const page: BadgedPage = { identity: { bytes, etag: `"${hash}"` } };
  if (options.compress && bytes.byteLength >= 256 && bytes.byteLength <= MAX_BADGE_COMPRESS_BYTES) {
    const br = brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 6, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength } });
    const gz = gzipSync(bytes, { level: 6 });
    if (br.byteLength < bytes.byteLength) page.br = { bytes: br, etag: `"${hash}-br"` };
    if (gz.byteLength < bytes.byteLength) page.gzip = { bytes: gz, etag: `"${hash}-gzip"` };
  }
  return page;
}
