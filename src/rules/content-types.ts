/**
 * Content types for published files, shared by ingest (recorded per path at deploy time) and
 * serve (sent as `Content-Type`). SPEC 4.5.5: types come from an allowlist; anything else is
 * `application/octet-stream`, so a site cannot make the browser run or render a type we did not
 * choose (e.g. `.xhtml`, `.svgz`, `.appcache`, `.php` source shown as HTML).
 */
import { createRequire } from 'node:module';

const OCTET_STREAM = 'application/octet-stream';

// Extensions we serve with their registered type. `mime-types` supplies the type so we do not
// hand-maintain registry strings; membership in this list is the security decision.
const ALLOWED_EXTENSIONS = [
  // web pages, styles, scripts, data
  'html',
  'htm',
  'css',
  'js',
  'mjs',
  'json',
  'webmanifest',
  // text
  'txt',
  'md',
  'csv',
  'xml',
  'rss',
  'atom',
  'ics',
  'vtt',
  // images
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'avif',
  'svg',
  'ico',
  'bmp',
  // fonts
  'woff',
  'woff2',
  'ttf',
  'otf',
  // audio
  'mp3',
  'ogg',
  'oga',
  'wav',
  'm4a',
  'flac',
  'aac',
  'opus',
  // video
  'mp4',
  'webm',
  'ogv',
  'mov',
  // documents and code
  'pdf',
  'wasm',
] as const;

// Where the registry answer is not what browsers expect: `.cjs` maps to `application/node`, which
// a browser will not execute as a module script; `audio/x-flac` is the pre-registration name.
const OVERRIDES: Readonly<Record<string, string>> = {
  cjs: 'text/javascript',
  flac: 'audio/flac',
};

/** Types whose bytes are text, so the header names the charset (sites are expected in UTF-8). */
function isTextual(essence: string): boolean {
  return (
    essence.startsWith('text/') ||
    essence.endsWith('+json') ||
    essence.endsWith('+xml') ||
    essence === 'application/json' ||
    essence === 'application/xml' ||
    essence === 'application/javascript'
  );
}

function buildTable(): ReadonlyMap<string, string> {
  // Loaded here, not at import: reading the registry costs a command-line run that never asks for a
  // type (`plinth deploy`) about 15 ms.
  const mime = createRequire(import.meta.url)('mime-types') as typeof import('mime-types');
  const table = new Map<string, string>();
  const add = (ext: string, essence: string): void => {
    table.set(ext, isTextual(essence) ? `${essence}; charset=utf-8` : essence);
  };
  for (const ext of ALLOWED_EXTENSIONS) {
    const type = mime.lookup(ext);
    // A registry update that drops an extension must fail closed, not serve a guess.
    if (type !== false) add(ext, type);
  }
  for (const [ext, type] of Object.entries(OVERRIDES)) add(ext, type);
  return table;
}

// Built once, on first use: pure data, no I/O. Lookups on the serve hot path are one Map get.
let typesByExtension: ReadonlyMap<string, string> | undefined;

/** The extension of the last path segment, lower-cased; '' when it has none (or is a dotfile). */
function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

export function contentTypeFor(path: string): string {
  typesByExtension ??= buildTable();
  return typesByExtension.get(extensionOf(path)) ?? OCTET_STREAM;
}

/** `text/HTML; charset=utf-8` → `text/html`. */
function essenceOf(type: string): string {
  const semicolon = type.indexOf(';');
  return (semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase();
}

// Formats that are not already compressed. Images, woff/woff2, audio and video carry their own
// compression, so gzip/br would cost CPU for no gain; ttf/otf, ico and bmp are raw tables/pixels.
const COMPRESSIBLE_BINARY = new Set(['application/wasm', 'font/ttf', 'font/otf', 'image/bmp', 'image/vnd.microsoft.icon', 'image/x-icon']);

export function isCompressibleType(type: string): boolean {
  const essence = essenceOf(type);
  return isTextual(essence) || COMPRESSIBLE_BINARY.has(essence);
}

/**
 * Below this, a precompressed variant saves a few hundred bytes at most, while each variant costs
 * a deploy a compression, a file and a rename.
 */
const VARIANTS_MIN_BYTES = 1024;

/** Whether a deploy makes precompressed variants of a file of this type and size. */
export function wantsVariants(type: string, size: number): boolean {
  return size >= VARIANTS_MIN_BYTES && isCompressibleType(type);
}

export function isHtmlType(type: string): boolean {
  return essenceOf(type) === 'text/html';
}
