import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { matchesIfNoneMatch, securityHeaders } from '../http/index.js';

/**
 * The shared static files of our pages: the stylesheet, the enhancement script and the icon.
 * Read once; each is served at a content-hashed address that may be cached for a year
 * (`/assets/plinth.1a2b3c4d.css`) and at its plain name with a short cache, both with a strong
 * ETag. An old hash (a page cached across a release) still gets the current file.
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
  respond(path: string, ifNoneMatch?: string): StaticResponse | undefined;
}

interface LoadedAsset {
  type: string;
  body: Buffer;
  hash: string;
  etag: string;
}

// src/web/assets is two folders below the repository, and so is dist/web: this finds the files
// from the compiled code and from the sources alike.
const ASSET_DIR = new URL('../../src/web/assets/', import.meta.url);

const HASHED = /^\/assets\/([a-z]+)\.([0-9a-f]{8,64})\.([a-z]+)$/;

export function loadPageAssets(dir: URL = ASSET_DIR): PageAssets {
  const assets = new Map<string, LoadedAsset>();
  for (const [name, type] of Object.entries(TYPES)) {
    const body = readFileSync(new URL(name, dir));
    const digest = createHash('sha256').update(body).digest('hex');
    assets.set(name, { type, body, hash: digest.slice(0, 12), etag: `"${digest.slice(0, 32)}"` });
  }

  const hashedName = (name: string, hash: string): string => {
    const dot = name.lastIndexOf('.');
    return `${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
  };

  return {
    href(name) {
      return `/assets/${hashedName(name, assets.get(name)!.hash)}`;
    },
    respond(path, ifNoneMatch) {
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
      const headers: Record<string, string> = {
        'Content-Type': asset.type,
        ETag: asset.etag,
        'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
        ...securityHeaders('resource'),
      };
      if (matchesIfNoneMatch(ifNoneMatch, asset.etag)) return { status: 304, headers, body: Buffer.alloc(0) };
      return { status: 200, headers, body: asset.body };
    },
  };
}
