import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request, type TestResponse } from '../helpers/http.js';

/**
 * One set of HTTP rules on every host: the same `Accept-Encoding` picks the same coding, the same
 * `If-None-Match` the same 304, and every answer of every host carries `nosniff` once, with its
 * host's variant of the security headers. Each host used to have its own negotiation (the docs
 * host sent br to `gzip;q=1, br;q=0.5`), its own ETag list reader (the site host refused a list
 * holding one unreadable element), and spelled its own headers (REST answers had no `nosniff`).
 */

let site: string;
let protectedSite: string;

const send = (host: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<TestResponse> =>
  request({ port: server.port, host, path, headers, method });

const css = 'body { color: red; }\n'.repeat(200);

const server = useTestServer({ PLINTH_API_RATE_PER_NETWORK: '0' });

beforeAll(async () => {
  const owner = await accountWithToken(server.store, 'builder');
  const files = {
    'index.html': `<!doctype html><title>t</title>${'<p>text</p>'.repeat(100)}`,
    'style.css': css,
    'logo.png': Buffer.alloc(600, 1),
    '404.html': '<h1>not here</h1>',
  };
  site = (await accountSite(server.store, owner, [], { files })).name;
  protectedSite = (await accountSite(server.store, owner, [], { files })).name;
  const set = await api(server, {
    method: 'PUT',
    path: `/v1/sites/${protectedSite}/access`,
    token: owner.token,
    body: { mode: 'password', password: 'a long enough password' },
  });
  expect(set.status).toBe(200);
});

/** Resources that come in more than one coding, on each host that has them. */
const COMPRESSED: Array<[label: string, host: () => string, path: string, method: string]> = [
  ['site file', () => `${site}.sites.localhost`, '/style.css', 'GET'],
  ['site file, HEAD', () => `${site}.sites.localhost`, '/style.css', 'HEAD'],
  ['site page', () => `${site}.sites.localhost`, '/', 'GET'],
  ['docs page', () => 'localhost', '/serving', 'GET'],
  ['docs Markdown', () => 'localhost', '/serving.md', 'GET'],
  ['docs llms.txt', () => 'localhost', '/llms.txt', 'HEAD'],
];

// [Accept-Encoding, the coding every host sends (undefined: the plain bytes)]
const ENCODINGS: Array<[string | undefined, 'br' | 'gzip' | undefined]> = [
  [undefined, undefined],
  ['gzip, deflate, br, zstd', 'br'],
  ['gzip;q=1, br;q=0.5', 'gzip'],
  ['br;q=0.5, gzip', 'gzip'],
  ['br;q=0, gzip', 'gzip'],
  ['br;q=0, gzip;q=0', undefined],
  ['*', 'br'],
  ['*;q=0', undefined],
  ['*;q=0.5, br;q=0', 'gzip'],
  ['identity', undefined],
  ['identity;q=0', undefined],
  ['identity;q=0, gzip', 'gzip'],
  ['gzip;q=0.5, identity', undefined],
  ['GZIP;Q=1, BR;Q=0.5', 'gzip'],
  ['  br ;q=0.5 ,\tgzip ', 'gzip'],
  ['deflate, compress', undefined],
];

describe('Accept-Encoding, the same on every host', () => {
  const rows = COMPRESSED.flatMap(([label, host, path, method]) => ENCODINGS.map(([header, coding]) => [label, header, coding, host, path, method] as const));

  it.each(rows)('%s: %j → %s', async (_label, header, coding, host, path, method) => {
    const plain = await send(host(), path, {}, 'GET');
    const res = await send(host(), path, header === undefined ? {} : { 'accept-encoding': header }, method);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(coding);
    expect(res.headers.vary).toMatch(/Accept-Encoding/);
    if (method === 'HEAD') return;
    const decoded = coding === 'br' ? brotliDecompressSync(res.body) : coding === 'gzip' ? gunzipSync(res.body) : res.body;
    expect(decoded.equals(plain.body)).toBe(true);
  });
});

/** Resources with a validator, on each host: the docs and app hosts' assets too. */
const VALIDATED: Array<[label: string, host: () => string, path: string, method: string]> = [
  ['site file', () => `${site}.sites.localhost`, '/style.css', 'GET'],
  ['site file, HEAD', () => `${site}.sites.localhost`, '/style.css', 'HEAD'],
  ['site image', () => `${site}.sites.localhost`, '/logo.png', 'GET'],
  ['docs page', () => 'localhost', '/serving', 'GET'],
  ['docs llms.txt', () => 'localhost', '/llms.txt', 'GET'],
  ['docs stylesheet', () => 'localhost', '/assets/plinth.css', 'GET'],
  ['app stylesheet', () => 'app.localhost', '/assets/plinth.css', 'GET'],
  ['app icon', () => 'app.localhost', '/favicon.ico', 'GET'],
];

// [If-None-Match built from the current ETag, 304 or 200]
const CONDITIONS: Array<[(etag: string) => string, 200 | 304]> = [
  [(etag) => etag, 304],
  [(etag) => `W/${etag}`, 304],
  [(etag) => `"other", ${etag}`, 304],
  [(etag) => `"other",${etag}`, 304],
  [(etag) => `"other",, ${etag}`, 304],
  [(etag) => `"other", garbage, ${etag}`, 304],
  [() => '*', 304],
  [() => '"other"', 200],
  [(etag) => `w/${etag}`, 200],
  [(etag) => etag.slice(1, -1), 200],
  [(etag) => `"other" ${etag}`, 200],
  [(etag) => `${etag.slice(0, -1)}x"`, 200],
];

describe('If-None-Match, the same on every host', () => {
  const rows = VALIDATED.flatMap(([label, host, path, method]) =>
    CONDITIONS.map(([condition, status]) => [label, condition(String.raw`"ETAG"`), status, host, path, method, condition] as const),
  );

  it.each(rows)('%s: %s → %i', async (_label, _shown, status, host, path, method, condition) => {
    const first = await send(host(), path);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[^"]+"$/);
    const res = await send(host(), path, { 'if-none-match': condition(etag) }, method);
    expect(res.status).toBe(status);
    expect(res.headers.etag).toBe(etag);
    if (status === 304) expect(res.body.byteLength).toBe(0);
  });
});

// Our own pages: our files only, no inline script or style, no framing.
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

// [answer, host, path, request headers, method, status, the headers of its variant]
const ANSWERS: Array<[string, () => string, string, Record<string, string>, string, number, Record<string, string | undefined>]> = [
  ['site file', () => `${site}.sites.localhost`, '/style.css', {}, 'GET', 200, { 'referrer-policy': 'strict-origin-when-cross-origin' }],
  ['site file, HEAD', () => `${site}.sites.localhost`, '/style.css', {}, 'HEAD', 200, { 'referrer-policy': 'strict-origin-when-cross-origin' }],
  ['site range', () => `${site}.sites.localhost`, '/style.css', { range: 'bytes=0-9' }, 'GET', 206, { 'referrer-policy': 'strict-origin-when-cross-origin' }],
  [
    'site range past the end',
    () => `${site}.sites.localhost`,
    '/style.css',
    { range: 'bytes=99999-' },
    'GET',
    416,
    { 'referrer-policy': 'strict-origin-when-cross-origin' },
  ],
  ['site 304', () => `${site}.sites.localhost`, '/style.css', { 'if-none-match': '*' }, 'GET', 304, { 'referrer-policy': 'strict-origin-when-cross-origin' }],
  ['site 404', () => `${site}.sites.localhost`, '/nothing-here', {}, 'GET', 404, { 'referrer-policy': 'strict-origin-when-cross-origin' }],
  ['site 405', () => `${site}.sites.localhost`, '/', {}, 'DELETE', 405, { 'referrer-policy': 'strict-origin-when-cross-origin' }],
  ['site host without a site', () => 'no-such-site.sites.localhost', '/', {}, 'GET', 404, { 'referrer-policy': 'strict-origin-when-cross-origin' }],
  [
    'site gate',
    () => `${protectedSite}.sites.localhost`,
    '/',
    {},
    'GET',
    401,
    {
      'referrer-policy': 'same-origin',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    },
  ],
  ['docs page', () => 'localhost', '/serving', {}, 'GET', 200, { 'content-security-policy': PAGE_CSP, 'x-frame-options': 'DENY' }],
  ['docs 304', () => 'localhost', '/serving', { 'if-none-match': '*' }, 'GET', 304, { 'content-security-policy': PAGE_CSP }],
  ['docs Markdown', () => 'localhost', '/serving.md', {}, 'GET', 200, { 'access-control-allow-origin': '*', 'content-security-policy': undefined }],
  ['docs 404', () => 'localhost', '/nothing-here', {}, 'GET', 404, { 'content-security-policy': PAGE_CSP }],
  ['docs 405', () => 'localhost', '/', {}, 'POST', 405, {}],
  ['docs folder redirect', () => 'localhost', '/serving/', {}, 'GET', 301, {}],
  ['docs stylesheet', () => 'localhost', '/assets/plinth.css', {}, 'GET', 200, {}],
  ['app page', () => 'app.localhost', '/login', {}, 'GET', 200, { 'content-security-policy': PAGE_CSP, 'x-frame-options': 'DENY' }],
  ['app 404', () => 'app.localhost', '/nothing-here', {}, 'GET', 404, { 'content-security-policy': PAGE_CSP }],
  ['app stylesheet', () => 'app.localhost', '/assets/plinth.css', {}, 'GET', 200, {}],
  ['REST answer', () => 'api.localhost', '/v1/me', {}, 'GET', 401, {}],
  ['REST 404', () => 'api.localhost', '/v1/nothing-here', {}, 'GET', 404, {}],
  ['MCP 404', () => 'mcp.localhost', '/nothing-here', {}, 'GET', 404, {}],
];

describe('security headers, from one builder on every host', () => {
  it.each(ANSWERS)('%s: nosniff once, and its variant', async (_label, host, path, headers, method, status, variant) => {
    const res = await send(host(), path, headers, method);
    expect(res.status).toBe(status);
    // Node joins a repeated header with ", ": once means exactly this value.
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    for (const [name, value] of Object.entries(variant)) expect(res.headers[name], name).toBe(value);
  });
});
