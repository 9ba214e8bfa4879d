// A site's `_redirects` and `_headers` are written by anyone who can deploy, and read by every
// visitor's browser. Each row is an attack with the answer it must get, against the real server:
// a response header smuggled through a rules file, an open redirect, a rewrite out of the site,
// headers that belong to the server, oversized and pathological files; then what visitors can
// send to a site with rules. A refused file refuses the whole deploy: the live site stays as it was.
import { beforeAll, describe, expect, it } from 'vitest';
import { compileHeaders } from '../../src/rules/index.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request, type TestResponse } from '../helpers/http.js';
import { storeFiles } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';

// A live anonymous site the hostile updates are aimed at; none of them may change it.
let site: { name: string; token: string; revision: string };
const INDEX = '<!doctype html><h1>ruled</h1>\n';

const server = useTestServer({ PLINTH_RULES_FILE_KB: '64' });

beforeAll(async () => {
  const created = await deployTo(server.port, { body: jsonDeployBody([['index.html', INDEX]]), contentType: 'application/json' });
  expect(created.status).toBe(201);
  site = { name: created.json.site.name, token: created.json.site_token, revision: created.json.revision.id };
});

const update = (files: Array<readonly [string, string]>) =>
  deployTo(server.port, {
    body: jsonDeployBody([['index.html', INDEX], ...files], { site: site.name, base_revision: site.revision }),
    contentType: 'application/json',
    token: site.token,
  });

const visit = (name: string, path: string, headers: Record<string, string> = {}): Promise<TestResponse> =>
  request({ port: server.port, host: `${name}.sites.localhost`, path, headers });

const CRLF_VALUE = 'X-Note: a\r\nSet-Cookie: stolen=1';

describe('rules files that must refuse the deploy', () => {
  it.each([
    ['a CR/LF starting a Set-Cookie line', '_headers', `/*\n  ${CRLF_VALUE}`, 'header_not_allowed'],
    ['a CR/LF starting an indented Set-Cookie line', '_headers', '/*\n  X-Note: a\r\n  Set-Cookie: stolen=1', 'header_not_allowed'],
    ['a bare CR splitting a header line', '_headers', '/*\n  X-Note: a\rLocation: https://evil.example/', 'bad_character'],
    ['a NUL in a header value', '_headers', '/*\n  X-Note: a\u0000b', 'bad_character'],
    ['a vertical tab in a redirect', '_redirects', '/a /b\u000b 301', 'control_character'],
    ['Set-Cookie', '_headers', '/*\n  Set-Cookie: session=attacker', 'header_not_allowed'],
    ['Content-Length', '_headers', '/*\n  Content-Length: 0', 'header_not_allowed'],
    ['Transfer-Encoding', '_headers', '/*\n  Transfer-Encoding: chunked', 'header_not_allowed'],
    ['Content-Encoding', '_headers', '/*\n  Content-Encoding: gzip', 'header_not_allowed'],
    ['Content-Type (the allowlist)', '_headers', '/data.txt\n  Content-Type: text/html', 'header_not_allowed'],
    ['ETag', '_headers', '/*\n  ETag: "forged"', 'header_not_allowed'],
    ['Location through _headers', '_headers', '/*\n  Location: https://evil.example/', 'header_not_allowed'],
    ['a weaker X-Content-Type-Options', '_headers', '/*\n  X-Content-Type-Options: sniff', 'header_not_allowed'],
    ['removing nosniff', '_headers', '/*\n  ! X-Content-Type-Options', 'header_not_removable'],
    ['removing Vary', '_headers', '/*\n  ! Vary', 'header_not_removable'],
    // Clear-Site-Data covers the registrable domain every site host shares: it would sign visitors out of every private site.
    ['Clear-Site-Data: "cookies"', '_headers', '/*\n  Clear-Site-Data: "cookies"', 'header_not_allowed'],
    ['Clear-Site-Data: "*" on one page', '_headers', '/logout\n  Clear-Site-Data: "*"', 'header_not_allowed'],
    // Instructions to the proxy in front: serve another file, a file of its disk, or steer its cache.
    ['X-Accel-Redirect', '_headers', '/*\n  X-Accel-Redirect: /protected/other-site/index.html', 'header_not_allowed'],
    ['X-Accel-Expires', '_headers', '/*\n  X-Accel-Expires: 31536000', 'header_not_allowed'],
    ['X-Sendfile', '_headers', '/*\n  X-Sendfile: /etc/passwd', 'header_not_allowed'],
    ['X-Sendfile-Type', '_headers', '/*\n  X-Sendfile-Type: X-Accel-Redirect', 'header_not_allowed'],
    ['X-Lighttpd-Send-File', '_headers', '/*\n  X-Lighttpd-Send-File: /etc/passwd', 'header_not_allowed'],
    ['X-LiteSpeed-Location', '_headers', '/*\n  X-LiteSpeed-Location: /etc/passwd', 'header_not_allowed'],
    ['Surrogate-Control', '_headers', '/*\n  Surrogate-Control: max-age=31536000', 'header_not_allowed'],
    ['a scheme-relative redirect (open redirect)', '_redirects', '/go //evil.example/ 302', 'scheme_relative_target'],
    ['a backslash redirect (/\\ is another host to browsers)', '_redirects', '/go /\\evil.example 302', 'bad_target'],
    ['a visitor-chosen host', '_redirects', '/go/:host https://:host/ 302', 'placeholder_in_host'],
    ['a visitor-chosen host by splat', '/go/*', '/go/* https://:splat 302', 'placeholder_in_host'],
    ['a javascript: target', '_redirects', '/go javascript:alert(document.domain) 302', 'bad_scheme'],
    ['a data: target', '_redirects', '/go data:text/html,<script>alert(1)</script> 302', 'bad_scheme'],
    ['a proxy to a private address', '_redirects', '/api/* https://169.254.169.254/:splat 200', 'proxy_not_supported'],
    ['a rewrite above the root', '_redirects', '/x /../../../etc/passwd 200', 'path_traversal'],
    ['an encoded rewrite above the root', '_redirects', '/x /%2e%2e/%2e%2e/etc/passwd 200', 'path_traversal'],
    ['a 404 page above the root', '_redirects', '/x/* /a/../../secret 404', 'path_traversal'],
    ['a file over the size cap', '_redirects', `# ${'x'.repeat(70 * 1024)}\n/a /b`, 'file_too_large'],
    ['an over-long line', '_redirects', `/${'a'.repeat(1200)} /b`, 'line_too_long'],
    ['too many rules', '_redirects', Array.from({ length: 2001 }, (_, i) => `/r${i} /t${i}`).join('\n'), 'too_many_rules'],
    ['too many header blocks', '_headers', Array.from({ length: 101 }, (_, i) => `/p${i}\n  X-A: 1`).join('\n'), 'too_many_blocks'],
    [
      'a pattern over the segment cap',
      '_redirects',
      `/${Array(33)
        .fill(':a')
        .map((p, i) => `${p}${i}`)
        .join('/')} /b`,
      'too_many_segments',
    ],
    ['a header path over the segment cap', '_headers', `/${Array(32).fill('a').join('/')}/*\n  X-A: 1`, 'too_many_segments'],
    ['too many query conditions', '_redirects', Array.from({ length: 1001 }, (_, i) => `/r${i} a=1 b=:b /t`).join('\n'), 'too_many_conditions'],
    ['too many header lines', '_headers', `/*\n${Array.from({ length: 101 }, (_, i) => `  X-A${i}: 1`).join('\n')}`, 'too_many_headers'],
  ])('%s', async (_name, file, text, reason) => {
    const path = file.startsWith('_') ? file : '_redirects';
    const answer = await update([[path, text]]);
    expect(answer.status, answer.text).toBe(400);
    expect(answer.json.error.code).toBe('bad_request');
    expect(answer.json.error.details.file).toBe(path);
    expect(answer.json.error.details.reason).toBe(reason);
    // The answer quotes the line as JSON, so nothing in it can break the answer either.
    expect(answer.text).not.toMatch(/\r\nSet-Cookie/);
    // Nothing was published: the live revision is unchanged.
    const live = await visit(site.name, '/');
    expect(live.text).toContain('<h1>ruled</h1>');
  });
});

describe('headers a deploy from before a refusal still holds', () => {
  it('are dropped when served: Clear-Site-Data and instructions to the proxy in front', async () => {
    const name = `old-rules-${Date.now().toString(36)}`;
    const stored = compileHeaders('/*\n  X-Frame-Options: DENY', { maxEntries: 0, maxLineChars: 0, maxFileBytes: 0 });
    if (!stored.ok) throw new Error('compile failed');
    // As a deploy from before the refusal stored them: compiled rules with the headers in.
    stored.compiled.blocks[0]!.set.push(
      ['Clear-Site-Data', '"cookies"'],
      ['X-Accel-Redirect', '/internal/other-site/secret.html'],
      ['X-Sendfile', '/etc/passwd'],
      ['X-LiteSpeed-Cache-Control', 'public, max-age=31536000'],
      ['Surrogate-Control', 'max-age=31536000'],
    );
    const result = await server.store.commitRevision({
      site: name,
      create: { name, plan: 'builder', claimed: true },
      baseRevision: null,
      files: await storeFiles(server.store, { 'index.html': INDEX, 'app.js': 'let a = 1;' }),
      kind: 'deploy',
      createdBy: 'admin',
      extras: { headers: stored.compiled },
    });
    expect(result.ok).toBe(true);
    for (const [path, method] of [
      ['/', 'GET'],
      ['/app.js', 'GET'],
      ['/app.js', 'HEAD'],
      ['/missing', 'GET'],
    ] as const) {
      const res = await request({ port: server.port, host: `${name}.sites.localhost`, path, method });
      expect(res.headers['x-frame-options'], path).toBe('DENY');
      for (const refused of ['clear-site-data', 'x-accel-redirect', 'x-sendfile', 'x-litespeed-cache-control', 'surrogate-control']) {
        expect(res.headers[refused], `${method} ${path} ${refused}`).toBeUndefined();
      }
    }
  });
});

describe('what visitors can send to a site with rules', () => {
  let name: string;
  beforeAll(async () => {
    const redirects = [
      '/go/:to    /landing/:to   302',
      '/r/*       /:splat        301',
      '/q s=:s    /search/:s     302',
      '/ext/*     https://docs.example.com/:splat 301',
      // As many placeholders as a pattern may have, and a splat: matched through the index, never backtracking.
      `/${Array.from({ length: 31 }, (_, i) => `:p${i}`).join('/')}/*  /deep/:p0/:splat  302`,
    ].join('\n');
    const created = await deployTo(server.port, {
      body: jsonDeployBody([
        ['index.html', INDEX],
        ['_redirects', redirects],
        ['_headers', '/*\n  X-Frame-Options: DENY'],
      ]),
      contentType: 'application/json',
    });
    expect(created.status, created.text).toBe(201);
    name = created.json.site.name;
  });

  it.each([
    ['CR/LF in a placeholder', '/go/a%0d%0aSet-Cookie:%20x=1', 400, undefined],
    ['a URL-encoded // in a placeholder', '/go/%2F%2Fevil.example', 302, '/landing/evil.example'],
    ['// in a splat', '/r//evil.example/x', 301, '/evil.example/x'],
    ['a backslash in a splat', '/r/%5Cevil.example', 400, undefined],
    ['a scheme in a splat', '/r/https:/evil.example', 301, '/https%3A/evil.example'],
    ['CR/LF in a query condition value', '/q?s=a%0d%0aX-Injected:%201', 302, '/search/a%0D%0AX-Injected%3A%201'],
    ['a path through a splat on another host', '/ext/..%2F..%2Fother', 400, undefined],
    ['.. climbing out before matching', '/go/../../../etc/passwd', 400, undefined],
  ])('%s', async (_name, path, status, location) => {
    const res = await visit(name, path);
    expect(res.status).toBe(status);
    expect(res.headers.location).toBe(location);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['x-injected']).toBeUndefined();
  });

  it('answers a long path against a pathological pattern', async () => {
    const path = `/${Array.from({ length: 300 }, (_, i) => `s${i}`).join('/')}`;
    const res = await visit(name, path);
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^\/deep\/s0\/s31\//);
  });

  it('never serves the rules files themselves', async () => {
    for (const path of ['/_redirects', '/_headers', '/_redirects/', '/%5Fredirects']) {
      const res = await visit(name, path);
      expect(res.status).not.toBe(200);
      expect(res.text).not.toContain('/landing/');
    }
  });
});
