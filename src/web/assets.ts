import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { createEncodingChooser, matchesIfNoneMatch, securityHeaders } from '../http/index.js';
import { ENCODINGS, type Encoding } from '../rules/index.js';

/**
 * The shared static files of our pages: the stylesheet, the enhancement script and the icon.
 * Read once; each is served at a content-hashed address that may be cached for a year
 * (`/assets/plinth.1a2b3c4d.css`) and at its plain name with a short cache, both with a strong
 * ETag. An old hash (a page cached across a release) still gets the current file. Each is
 * compressed once, at load, and sent as the client's `Accept-Encoding` prefers.
 */

export type AssetName = 'plinth.css' | 'plinth.js' | 'drop.js' | 'favicon.svg';

const TYPES: Record<AssetName, string> = {
  'plinth.css': 'text/css; charset=utf-8',
  'plinth.js': 'text/javascript; charset=utf-8',
  'drop.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

export interface StaticResponse {
  status: 200 | 304;
  headers: Record<string, string>;
  body: Buffer;
}

export interface PageAssets {
  /** The cache-busting address of an asset, for `<link>` and `<script>`. */
  href(name: AssetName): string;
  /** The answer to GET or HEAD of `path`, or `undefined` when it is not one of our assets. */
  respond(path: string, ifNoneMatch?: string, acceptEncoding?: string): StaticResponse | undefined;
}

interface LoadedAsset {
  type: string;
  body: Buffer;
  hash: string;
  etag: string;
  /** Its compressed forms, each with its own strong ETag (RFC 9110 8.8.3). */
  variants: ReadonlyMap<Encoding, { body: Buffer; etag: string }>;
}

function compressedForms(body: Buffer, etag: string): Map<Encoding, { body: Buffer; etag: string }> {
  const forms = new Map<Encoding, { body: Buffer; etag: string }>();
  const made: Record<Encoding, () => Buffer> = {
    br: () => brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.byteLength } }),
    gzip: () => gzipSync(body, { level: 9 }),
  };
  for (const encoding of ENCODINGS) {
    const compressed = made[encoding]();
    // A form no smaller than the file itself is not worth a header.
    if (compressed.byteLength < body.byteLength) forms.set(encoding, { body: compressed, etag: `${etag.slice(0, -1)}-${encoding}"` });
  }
  return forms;
}

// src/web/assets is two folders below the repository, and so is dist/web: this finds the files
// from the compiled code and from the sources alike.
const ASSET_DIR = new URL('../../src/web/assets/', import.meta.url);

const HASHED = /^\/assets\/([a-z]+)\.([0-9a-f]{8,64})\.([a-z]+)$/;

let shipped: PageAssets | undefined;

/** The assets in `dir`; the shipped ones are read and compressed once per thread, for every host. */
export function loadPageAssets(dir?: URL): PageAssets {
  if (dir === undefined) return (shipped ??= readPageAssets(ASSET_DIR));
  return readPageAssets(dir);
}

function readPageAssets(dir: URL): PageAssets {
  const assets = new Map<string, LoadedAsset>();
  for (const [name, type] of Object.entries(TYPES)) {
    const body = readFileSync(new URL(name, dir));
    const digest = createHash('sha256').update(body).digest('hex');
    const etag = `"${digest.slice(0, 32)}"`;
    assets.set(name, { type, body, hash: digest.slice(0, 12), etag, variants: compressedForms(body, etag) });
  }
  const chooseEncoding = createEncodingChooser(ENCODINGS);

  const hashedName = (name: string, hash: string): string => {
    const dot = name.lastIndexOf('.');
    return `${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
  };

  return {
    href(name) {
      return `/assets/${hashedName(name, assets.get(name)!.hash)}`;
    },
    respond(path, ifNoneMatch, acceptEncoding) {
      let name: string | undefined;
      let immutable = false;
      const hashed = HASHED.exec(path);
      if (hashed) {
        name = `${hashed[1]}.${hashed[3]}`;
        immutable = assets.get(name)?.hash === hashed[2];
      } else if (path.startsWith('/assets/')) {
        name = path.slice('/assets/'.length);
      } else if (path === '/favicon.ico' || path === '/favicon.svg') {
        name = 'favicon.svg';
      }
      const asset = name === undefined ? undefined : assets.get(name);
      if (!asset) return undefined;
      const encoding = asset.variants.size === 0 ? undefined : chooseEncoding(acceptEncoding, [...asset.variants.keys()]);
      const variant = encoding === undefined ? undefined : asset.variants.get(encoding);
      const etag = variant?.etag ?? asset.etag;
      const headers: Record<string, string> = {
        'Content-Type': asset.type,
        ETag: etag,
        'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
        ...(asset.variants.size > 0 ? { Vary: 'Accept-Encoding' } : {}),
        ...(encoding !== undefined ? { 'Content-Encoding': encoding } : {}),
        ...securityHeaders('resource'),
      };
      if (matchesIfNoneMatch(ifNoneMatch, etag)) return { status: 304, headers, body: Buffer.alloc(0) };
      return { status: 200, headers, body: variant?.body ?? asset.body };
    },
  };
}
