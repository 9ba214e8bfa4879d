import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { Config } from '../config.js';
import { createEncodingChooser, matchesIfNoneMatch, pickMediaType, securityHeaders } from '../http/index.js';
import { ENCODINGS, type Encoding } from '../rules/index.js';
import { loadPageAssets, type PageAssets } from '../web/index.js';
import { docFacts } from './facts.js';
import { loadGuides, type Guide } from './guides.js';
import { llmsFullTxt, llmsTxt } from './llms.js';
import { guidePage, landingPage, notFoundPage, type PageContext } from './pages.js';

/**
 * Everything the docs host serves, built once: each address maps to a finished body with its
 * type, strong ETag and cache lifetime. A request is then a map lookup, a conditional check and,
 * for text larger than a packet, a compressed variant made on first use and kept.
 */

export interface DocsRequest {
  method: string;
  path: string;
  accept?: string;
  acceptEncoding?: string;
  ifNoneMatch?: string;
}

export interface DocsResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Resource {
  type: string;
  body: Buffer;
  etag: string;
  /** HTML pages send the CSP and friends; text for agents may be read cross-origin. */
  kind: 'page' | 'text';
  /** Compressed variants, made on first request. */
  variants: Map<Encoding, { body: Buffer; etag: string }>;
  /** The Markdown of this page, for `Accept: text/markdown`. */
  markdownPath?: string;
}

export interface DocsSite {
  guides: readonly Guide[];
  /** Every address served, for tests and the link checker. */
  paths(): string[];
  respond(request: DocsRequest): DocsResponse;
}

const PAGE_CACHE = 'public, max-age=300';
const COMPRESS_ABOVE_BYTES = 1024;

/** What the docs host serves besides its guides: the API's own OpenAPI document (the api area builds it from its route table). */
export interface DocsSiteOptions {
  openApi: Record<string, unknown>;
  assets?: PageAssets;
  guideDir?: URL;
}

export function buildDocsSite(config: Readonly<Config>, options: DocsSiteOptions): DocsSite {
  const assets = options.assets ?? loadPageAssets();
  const docsUrl = config.publicUrls.docs;
  const guides = loadGuides({ facts: docFacts(config), urls: config.publicUrls, port: config.port, dir: options.guideDir });
  const landing = guides.find((guide) => guide.slug === 'index');
  if (!landing) throw new Error('docs/index.md (the landing page) is missing');
  const context: PageContext = { guides, assets, docsUrl, appUrl: config.publicUrls.app };

  const resources = new Map<string, Resource>();
  const add = (path: string, type: string, text: string, kind: Resource['kind'], markdownPath?: string): void => {
    const body = Buffer.from(text, 'utf8');
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    resources.set(path, { type, body, etag, kind, variants: new Map(), markdownPath });
  };
  const MARKDOWN = 'text/markdown; charset=utf-8';
  add('/', 'text/html; charset=utf-8', landingPage(context, landing), 'page', '/index.md');
  add('/index.md', MARKDOWN, landing.markdown, 'text');
  for (const guide of guides) {
    if (guide.slug === 'index') continue;
    add(`/${guide.slug}`, 'text/html; charset=utf-8', guidePage(context, guide), 'page', `/${guide.slug}.md`);
    add(`/${guide.slug}.md`, MARKDOWN, guide.markdown, 'text');
  }
  add('/llms.txt', 'text/plain; charset=utf-8', llmsTxt(guides, docsUrl), 'text');
  add('/llms-full.txt', 'text/plain; charset=utf-8', llmsFullTxt(guides, docsUrl), 'text');
  add('/openapi.json', 'application/json; charset=utf-8', `${JSON.stringify(options.openApi, null, 2)}\n`, 'text');
  add('/robots.txt', 'text/plain; charset=utf-8', 'User-agent: *\nAllow: /\n', 'text');
  const pageSecurity = securityHeaders('page');
  // Text for agents may be read cross-origin.
  const textHeaders = { ...securityHeaders('resource'), 'Access-Control-Allow-Origin': '*' };
  const chooseEncoding = createEncodingChooser(ENCODINGS);

  return {
    guides,
    paths: () => [...resources.keys()],
    respond(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return {
          status: 405,
          headers: { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...securityHeaders('resource') },
          body: Buffer.from('The docs can only be read, with GET or HEAD.\n'),
        };
      }
      const asset = assets.respond(request.path, request.ifNoneMatch, request.acceptEncoding);
      if (asset) return asset;

      let resource = resources.get(request.path);
      if (!resource && request.path.length > 1 && request.path.endsWith('/')) {
        const bare = request.path.replace(/\/+$/, '');
        if (resources.has(bare))
          return { status: 301, headers: { Location: bare, 'Cache-Control': PAGE_CACHE, ...securityHeaders('resource') }, body: Buffer.alloc(0) };
      }
      if (!resource) {
        const body = Buffer.from(notFoundPage(context, request.path.slice(0, 200)), 'utf8');
        return { status: 404, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...pageSecurity }, body };
      }
      // Agents that ask for Markdown get the page's Markdown at the same address.
      const vary = ['Accept-Encoding'];
      if (resource.markdownPath) {
        vary.push('Accept');
        if (prefersMarkdown(request.accept)) resource = resources.get(resource.markdownPath)!;
      }
      const encoding = resource.body.byteLength > COMPRESS_ABOVE_BYTES ? chooseEncoding(request.acceptEncoding) : undefined;
      const variant = encoding ? compressed(resource, encoding) : undefined;
      const etag = variant?.etag ?? resource.etag;
      const headers: Record<string, string> = {
        'Content-Type': resource.type,
        ETag: etag,
        'Cache-Control': PAGE_CACHE,
        Vary: vary.join(', '),
        ...(resource.kind === 'page' ? pageSecurity : textHeaders),
      };
      if (encoding) headers['Content-Encoding'] = encoding;
      if (matchesIfNoneMatch(request.ifNoneMatch, etag)) {
        return { status: 304, headers, body: Buffer.alloc(0) };
      }
      return { status: 200, headers, body: variant?.body ?? resource.body };
    },
  };
}

function compressed(resource: Resource, encoding: Encoding): { body: Buffer; etag: string } {
  let variant = resource.variants.get(encoding);
  if (!variant) {
    const body =
      encoding === 'br'
        ? brotliCompressSync(resource.body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: resource.body.byteLength } })
        : gzipSync(resource.body, { level: 9 });
    // Each representation has its own strong ETag (RFC 9110 8.8.3).
    variant = { body, etag: `${resource.etag.slice(0, -1)}-${encoding}"` };
    resource.variants.set(encoding, variant);
  }
  return variant;
}

/** True when the client ranks Markdown above HTML (an agent asking for `text/markdown`). */
export function prefersMarkdown(accept: string | undefined): boolean {
  return pickMediaType(accept, ['text/html', 'text/markdown']) === 'text/markdown';
}
