import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useTestServer } from '../helpers/fixtures.js';
import { callApi, request } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Sites that behave like real sites: folder addresses keep their relative links, `_redirects`
 * and `_headers` are compiled at deploy and applied while serving, and every deploy says which
 * references lead nowhere. Deployed through the REST API, served by the real server.
 */

let owner: TestAccount;

const server = useTestServer();

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

type Files = Array<readonly [string, string]>;

async function deploy(files: Files, fields: Record<string, unknown> = {}) {
  const answer = await deployTo(server.port, { body: jsonDeployBody(files, fields), contentType: 'application/json', token: owner.token });
  return answer;
}

async function deployed(files: Files): Promise<{ name: string; revision: string; json: any }> {
  const answer = await deploy(files);
  expect(answer.status, answer.text).toBe(201);
  return { name: answer.json.site.name, revision: answer.json.revision.id, json: answer.json };
}

const get = (name: string, path: string, headers: Record<string, string> = {}, method = 'GET') =>
  request({ port: server.port, host: `${name}.sites.localhost`, path, headers, method });

const page = (title: string, body = '') => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

describe('folder addresses', () => {
  let name: string;
  beforeAll(async () => {
    ({ name } = await deployed([
      ['index.html', page('Home', '<a href="reveal/">slides</a>')],
      ['about.html', page('About')],
      ['reveal/index.html', page('Slides', '<link rel="stylesheet" href="dist/reveal.css"><script src="dist/reveal.js"></script>')],
      ['reveal/dist/reveal.css', 'body{margin:0}'],
      ['reveal/dist/reveal.js', 'console.log(1)'],
    ]));
  });

  it('sends a folder without its slash to the folder, keeping the query', async () => {
    const plain = await get(name, '/reveal');
    expect(plain.status).toBe(301);
    expect(plain.headers.location).toBe('/reveal/');
    const withQuery = await get(name, '/reveal?theme=black');
    expect(withQuery.headers.location).toBe('/reveal/?theme=black');
    const head = await get(name, '/reveal', {}, 'HEAD');
    expect(head.status).toBe(301);
  });

  it('serves the folder index at the folder address, where its relative assets resolve', async () => {
    const index = await get(name, '/reveal/');
    expect(index.status).toBe(200);
    expect(index.text).toContain('<h1>Slides</h1>');
    expect((await get(name, '/reveal/dist/reveal.css')).status).toBe(200);
  });

  it('still serves about.html at /about', async () => {
    const about = await get(name, '/about');
    expect(about.status).toBe(200);
    expect(about.text).toContain('<h1>About</h1>');
  });

  it('never serves _redirects or _headers as files', async () => {
    const { name: ruled } = await deployed([
      ['index.html', page('Home')],
      ['_redirects', '/a /b'],
      ['_headers', '/*\n  X-Frame-Options: DENY'],
    ]);
    for (const path of ['/_redirects', '/_headers']) expect((await get(ruled, path)).status).toBe(404);
  });
});

describe('_redirects', () => {
  let name: string;
  beforeAll(async () => {
    ({ name } = await deployed([
      ['index.html', page('Home')],
      ['about.html', page('About')],
      ['app/index.html', page('App shell')],
      ['shop/not-found.html', page('Shop has no such product')],
      ['gone.html', page('This offer ended')],
      ['style.css', 'body{color:red}'],
      [
        '_redirects',
        [
          '# moved pages',
          '/old-about      /about          301',
          '/blog/*         /posts/:splat   302',
          '/u/:name        /people/:name   307',
          '/see-other      /about          303',
          '/perm           /about          308',
          '/about          /elsewhere      301',
          '/style.css      /new.css        302!',
          '/store id=:id   /products/:id   301',
          '/docs/*         https://docs.example.com/:splat 301',
          '/app/*          /app/index.html 200',
          '/shop/*         /shop/not-found.html 404',
          '/offer          /gone.html      410',
          '/retired        /nothing        410',
        ].join('\n'),
      ],
    ]));
  });

  it.each([
    ['a 301 with the query kept', '/old-about?ref=x', 301, '/about?ref=x'],
    ['a 302 with a splat', '/blog/2024/hello', 302, '/posts/2024/hello'],
    ['a 307 with a placeholder, encoded', '/u/J%C3%BCrgen%20K', 307, '/people/J%C3%BCrgen%20K'],
    ['a 303', '/see-other', 303, '/about'],
    ['a 308', '/perm', 308, '/about'],
    ['a forced rule over an existing file', '/style.css', 302, '/new.css'],
    ['a query condition', '/store?id=42', 301, '/products/42'],
    ['another host, https only', '/docs/a/b', 301, 'https://docs.example.com/a/b'],
  ])('%s', async (_name, path, status, location) => {
    const res = await get(name, path);
    expect(res.status).toBe(status);
    expect(res.headers.location).toBe(location);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('lets an existing file win over an unforced rule', async () => {
    const about = await get(name, '/about');
    expect(about.status).toBe(200);
    expect(about.text).toContain('<h1>About</h1>');
  });

  it('rewrites with 200 to a file of the same site, the address unchanged', async () => {
    const res = await get(name, '/app/settings/profile');
    expect(res.status).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('<h1>App shell</h1>');
  });

  it('serves a section 404 page with status 404', async () => {
    const res = await get(name, '/shop/unknown-product');
    expect(res.status).toBe(404);
    expect(res.text).toContain('Shop has no such product');
  });

  it('answers 410 gone, with the page the rule names or a plain one', async () => {
    const withPage = await get(name, '/offer');
    expect(withPage.status).toBe(410);
    expect(withPage.text).toContain('This offer ended');
    const plain = await get(name, '/retired');
    expect(plain.status).toBe(410);
    expect(plain.text).toContain('Page gone');
  });

  it('answers HEAD like GET', async () => {
    const res = await get(name, '/blog/x', {}, 'HEAD');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/posts/x');
    expect(res.text).toBe('');
  });

  it('does not match a query condition that is missing', async () => {
    const res = await get(name, '/store');
    // Nothing matches and there is no 404.html: the single-page-app fallback answers.
    expect(res.status).toBe(200);
    expect(res.text).toContain('<h1>Home</h1>');
  });

  it('keeps the rules over a rollback and drops them with a deploy without the file', async () => {
    const before = (await callApi(server.port, { path: `/v1/sites/${name}`, token: owner.token })).json.live_revision.id;
    const next = await deployTo(server.port, {
      body: jsonDeployBody([['index.html', page('Plain')]], { site: name, base_revision: before }),
      contentType: 'application/json',
      token: owner.token,
    });
    expect(next.status).toBe(201);
    expect((await get(name, '/perm')).status).toBe(200);
    const rolled = await callApi(server.port, { method: 'POST', path: `/v1/sites/${name}/rollback`, token: owner.token, body: { revision: before } });
    expect(rolled.status).toBe(201);
    expect((await get(name, '/perm')).status).toBe(308);
  });
});

describe('_headers', () => {
  let name: string;
  beforeAll(async () => {
    ({ name } = await deployed([
      ['index.html', page('Home')],
      ['public/page.html', page('Public')],
      ['assets/app.css', 'body{color:red}\n'.repeat(100)],
      ['404.html', page('Not here')],
      [
        '_headers',
        [
          '/*',
          '  X-Frame-Options: DENY',
          "  Content-Security-Policy: default-src 'self'",
          '  X-Robots-Tag: noindex',
          '/assets/*',
          '  Cache-Control: public, max-age=31536000, immutable',
          '  Access-Control-Allow-Origin: *',
          '  Vary: Origin',
          '/public/*',
          '  ! X-Robots-Tag',
          '  ! Referrer-Policy',
        ].join('\n'),
      ],
    ]));
  });

  it('applies every matching block to a 200', async () => {
    const res = await get(name, '/assets/app.css');
    expect(res.status).toBe(200);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toBe("default-src 'self'");
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('adds to Vary where the server varies by encoding', async () => {
    // Compressed variants appear once the deploy has gone live; Vary is sent from then on.
    let vary: string | undefined;
    await waitUntil(async () => {
      vary = (await get(name, '/assets/app.css', { 'accept-encoding': 'br' })).headers.vary as string | undefined;
      return vary?.includes('Accept-Encoding') === true;
    }, 10_000);
    expect(vary).toBe('Accept-Encoding, Origin');
  });

  it('applies to 304, 206, HEAD and 404 answers of the path', async () => {
    const full = await get(name, '/assets/app.css');
    const notModified = await get(name, '/assets/app.css', { 'if-none-match': String(full.headers.etag) });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const range = await get(name, '/assets/app.css', { range: 'bytes=0-3' });
    expect(range.status).toBe(206);
    expect(range.headers['access-control-allow-origin']).toBe('*');
    const head = await get(name, '/assets/app.css', {}, 'HEAD');
    expect(head.headers['x-frame-options']).toBe('DENY');
    const missing = await get(name, '/assets/missing.css');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('Not here');
    expect(missing.headers['access-control-allow-origin']).toBe('*');
  });

  it('removes what a broader block set, and a server header, with ! Name', async () => {
    const res = await get(name, '/public/page.html');
    expect(res.headers['x-robots-tag']).toBeUndefined();
    expect(res.headers['referrer-policy']).toBeUndefined();
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('leaves paths no block matches as they were', async () => {
    const { name: plain } = await deployed([
      ['index.html', page('Home')],
      ['x.css', 'a{}'],
      ['_headers', '/only/*\n  X-A: 1'],
    ]);
    const res = await get(plain, '/x.css');
    expect(res.headers['x-a']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  });
});

describe('files written for Netlify and Cloudflare Pages, served over HTTP', () => {
  // Forms from the peers' own cases (test/rules/peer-fixtures), in one site: what a visitor gets.
  const REDIRECTS = [
    '# moved pages',
    '/blog/my-post.php  /blog/my-post # an old leftover',
    '/admin/* 200!',
    '/partialSplat* /new-partialSplat:splat 302',
    '/file-:id.html /files/:id 302',
    'old.html /new.html',
    '/c?this=rejected /d 301',
  ].join('\n');
  const HEADERS = ['  /path', '    X-Indented: yes', '/*.xml', 'X-Feed: yes', '/some page', '  X-Spaces: yes'].join('\n');
  let name: string;
  let revision: string;
  beforeAll(async () => {
    ({ name, revision } = await deployed([
      ['index.html', page('Home')],
      ['path.html', page('Path')],
      ['admin/index.html', page('Admin')],
      ['feeds/atom.xml', '<feed/>'],
      ['_redirects', REDIRECTS],
      ['_headers', HEADERS],
    ]));
  });

  it.each([
    ['a rule with a comment after it', '/blog/my-post.php', 301, '/blog/my-post'],
    ['a * inside a path', '/partialSplatfoo/bar', 302, '/new-partialSplatfoo/bar'],
    ['a placeholder inside a segment', '/file-42.html', 302, '/files/42'],
    ['a from without its /', '/old.html', 301, '/new.html'],
    ['a from with a query (left out)', '/c?x=1', 301, '/d?x=1'],
  ])('%s: %s answers %i to %s', async (_name, path, status, location) => {
    const answer = await get(name, path);
    expect(answer.status).toBe(status);
    expect(answer.headers.location).toBe(location);
  });

  it('serves a forced forward rule', async () => {
    const answer = await get(name, '/admin/');
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('<h1>Admin</h1>');
  });

  it.each([
    ['an indented path line', '/path', 'x-indented'],
    ['a * inside a segment, at any depth', '/feeds/atom.xml', 'x-feed'],
    ['spaces in a path line', '/some%20page', 'x-spaces'],
  ])('applies headers under %s', async (_name, path, header) => {
    const answer = await get(name, path);
    expect(answer.headers[header]).toBe('yes');
  });

  it('applies a rule for one host name at that host only', async () => {
    const host = `${name}.sites.localhost`;
    const update = await deploy(
      [
        ['index.html', page('Home')],
        ['_redirects', `https://${host}/here /there 302\nhttps://elsewhere.example/* /nowhere 302`],
        ['_headers', `https://${host}/*\n  X-Host-Rule: yes`],
      ],
      { site: name, base_revision: revision },
    );
    expect(update.status, update.text).toBe(201);
    const here = await get(name, '/here');
    expect(here.status).toBe(302);
    expect(here.headers.location).toBe('/there');
    expect(here.headers['x-host-rule']).toBeUndefined();
    const page404 = await get(name, '/anything.png');
    expect(page404.headers['x-host-rule']).toBe('yes');
    expect((await get(name, '/x/y.png')).headers.location).toBeUndefined();
  });
});

describe('refused rules files', () => {
  it.each([
    ['_redirects', '/ok /fine\n/a /b 299', 2, 'unknown_status'],
    ['_redirects', '/api/* https://api.example.com/:splat 200', 1, 'proxy_not_supported'],
    ['_redirects', '/a', 1, 'missing_to'],
    ['_redirects', '/ /de 302 Country=de', 1, 'unsupported_condition'],
    ['_headers', '/*\n  Set-Cookie: a=1', 2, 'header_not_allowed'],
    ['_headers', '/*\n  ! X-Content-Type-Options', 2, 'header_not_removable'],
  ])('%s: %j is refused with file, line and reason', async (file, text, line, reason) => {
    const answer = await deploy([
      ['index.html', page('Home')],
      [file, text],
    ]);
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe('bad_request');
    expect(answer.json.error.details).toEqual({ file, line, reason, lines: [{ file, line, reason }] });
    const quoted = text.split('\n')[line - 1]!;
    expect(answer.json.agent_message).toContain(JSON.stringify(quoted));
    expect(answer.json.agent_message).toMatch(/fix that line and deploy again/);
  });

  it('tells an anonymous deploy that rules files are 1 MB on every plan, not to make an account', async () => {
    const rules = Array.from({ length: 40_000 }, (_, i) => `/old/page-${i} /new/page-${i} 301`).join('\n');
    expect(Buffer.byteLength(rules)).toBeGreaterThan(1024 * 1024);
    const answer = await deployTo(server.port, {
      body: jsonDeployBody([
        ['index.html', page('Home')],
        ['_redirects', rules],
      ]),
      contentType: 'application/json',
    });
    expect(answer.status, answer.text).toBe(413);
    expect(answer.json.agent_message).toMatch(/_redirects may be at most 1 MB on every plan, with an account too/);
    expect(answer.json.agent_message).not.toMatch(/free account/);
  });

  it('lists every refused line of both files in one answer, and publishes nothing', async () => {
    const redirects = ['/ok /fine', '/a /b 299', '/c', '/shop/* https://shop.example/:splat 200', '/d /e 302 Country=de'].join('\n');
    const headers = ['/*', '  X-Frame-Options: DENY', '  Set-Cookie: a=1', 'http://example.com/*', '  X-A: 1', '/x', '  ! Vary'].join('\n');
    const answer = await deploy([
      ['index.html', page('Home')],
      ['_redirects', redirects],
      ['_headers', headers],
    ]);
    expect(answer.status, answer.text).toBe(400);
    expect(answer.json.error.code).toBe('bad_request');
    const lines = [
      { file: '_redirects', line: 2, reason: 'unknown_status' },
      { file: '_redirects', line: 3, reason: 'missing_to' },
      { file: '_redirects', line: 4, reason: 'proxy_not_supported' },
      { file: '_redirects', line: 5, reason: 'unsupported_condition' },
      { file: '_headers', line: 3, reason: 'header_not_allowed' },
      { file: '_headers', line: 4, reason: 'not_https' },
      { file: '_headers', line: 7, reason: 'header_not_removable' },
    ];
    expect(answer.json.error.details).toEqual({ ...lines[0], lines });
    for (const { file, line, reason } of lines) expect(answer.json.error.message).toContain(`${file} line ${line} (${reason})`);
    for (const { file, line } of lines) expect(answer.json.agent_message).toContain(`${file} line ${line} reads`);
    expect(answer.json.agent_message).toMatch(/Nothing was published/);
  });
});

describe('the link check', () => {
  it('answers every deploy with warnings, empty when every reference leads somewhere', async () => {
    const { json } = await deployed([
      ['index.html', page('Home', '<a href="about">About</a><a href="docs">Docs</a><img src="/img/a.png" srcset="img/a.png 1x, img/a.png 2x">')],
      ['about.html', page('About', '<a href="/">Home</a><a href="#top">Top</a><a href="https://example.com/x">out</a><a href="mailto:a@example.com">mail</a>')],
      ['docs/index.html', page('Docs', '<link rel="stylesheet" href="../style.css"><a href="../about">back</a>')],
      ['style.css', "@import 'reset.css';\nbody { background: url(img/a.png) }"],
      ['reset.css', '*{margin:0}'],
      ['img/a.png', 'png'],
    ]);
    expect(json.warnings).toEqual([]);
    expect(json.warnings_total).toBe(0);
  });

  it('lists references that lead nowhere, with file, line and the reference as written', async () => {
    const { json } = await deployed([
      [
        'index.html',
        '<!doctype html>\n<link rel="stylesheet" href="dist/reveal.css">\n<a href="/missing-page.html">x</a>\n<script>document.write("<img src=not-a-link.png>")</script>\n',
      ],
      ['app.css', '.a {\n  background: url("../img/none.png");\n}\n/* url(commented-out.png) */\n'],
      ['404.html', page('Not here')],
    ]);
    expect(json.warnings).toEqual([
      { file: 'app.css', line: 2, ref: '../img/none.png', kind: 'broken_link' },
      { file: 'index.html', line: 2, ref: 'dist/reveal.css', kind: 'broken_link' },
      { file: 'index.html', line: 3, ref: '/missing-page.html', kind: 'broken_link' },
    ]);
    expect(json.warnings_total).toBe(3);
    expect(json.agent_message).toMatch(/3 link or asset references lead nowhere/);
  });

  it('counts _redirects targets and folder addresses as leading somewhere, a 404 rule as nowhere', async () => {
    const { json } = await deployed([
      ['index.html', page('Home', '<a href="/old">old</a><a href="/guide">guide</a><a href="/shop/x">shop</a>')],
      ['guide/index.html', page('Guide')],
      ['_redirects', '/old /guide/ 301\n/shop/* /index.html 404'],
    ]);
    expect(json.warnings.map((w: { ref: string }) => w.ref)).toEqual(['/shop/x']);
  });

  it('checks a patch as the whole resulting site', async () => {
    const { name, revision } = await deployed([
      ['index.html', page('Home', '<img src="logo.png">')],
      ['logo.png', 'png'],
    ]);
    const patch = await deploy([['other.html', page('Other')]], { site: name, base_revision: revision, patch: true, deleted: ['logo.png'] });
    expect(patch.status).toBe(201);
    expect(patch.json.warnings).toEqual([{ file: 'index.html', line: 1, ref: 'logo.png', kind: 'broken_link' }]);
  });
});

describe('digest deploys', () => {
  const described = (files: Files) =>
    files.map(([path, content]) => ({ path, size: Buffer.byteLength(content), sha256: createHash('sha256').update(content).digest('hex') }));

  it('compile the rules and check the links of the assembled site, and refuse a bad line before the manifest is spent', async () => {
    const { name, revision } = await deployed([
      ['index.html', page('Home', '<img src="logo.png">')],
      ['logo.png', 'png'],
    ]);
    // logo.png is left out: the kept index.html now points nowhere.
    const bad: Files = [
      ['index.html', page('Home', '<img src="logo.png">')],
      ['_redirects', '/a /b 299'],
    ];
    const manifest = await callApi(server.port, {
      method: 'POST',
      path: '/v1/deploy/manifest',
      token: owner.token,
      body: { site: name, base_revision: revision, files: described(bad) },
    });
    expect(manifest.status, manifest.text).toBe(201);
    const refused = await callApi(server.port, {
      method: 'POST',
      path: `/v1/deploy?manifest=${manifest.json.manifest}`,
      token: owner.token,
      raw: jsonDeployBody([['_redirects', '/a /b 299']]),
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.details).toMatchObject({ file: '_redirects', line: 1, reason: 'unknown_status' });

    const good: Files = [
      ['index.html', page('Home', '<img src="logo.png">')],
      ['_redirects', '/a /b 302'],
    ];
    const second = await callApi(server.port, {
      method: 'POST',
      path: '/v1/deploy/manifest',
      token: owner.token,
      body: { site: name, base_revision: revision, files: described(good) },
    });
    const published = await callApi(server.port, {
      method: 'POST',
      path: `/v1/deploy?manifest=${second.json.manifest}`,
      token: owner.token,
      raw: jsonDeployBody([['_redirects', '/a /b 302']]),
      headers: { 'content-type': 'application/json' },
    });
    expect(published.status, published.text).toBe(201);
    expect(published.json.warnings).toEqual([{ file: 'index.html', line: 1, ref: 'logo.png', kind: 'broken_link' }]);
    expect((await get(name, '/a')).status).toBe(302);
  });
});

describe('the link check with a cap', () => {
  const capped = useTestServer({ PLINTH_LINK_WARNINGS: '2', PLINTH_INGEST_THREADS: '2' });

  it('lists the first warnings and counts them all', async () => {
    const links = Array.from({ length: 7 }, (_, i) => `<img src="missing-${i}.png">`).join('\n');
    const answer = await deployTo(capped.port, { body: jsonDeployBody([['index.html', links]]), contentType: 'application/json' });
    expect(answer.status).toBe(201);
    expect(answer.json.warnings).toHaveLength(2);
    expect(answer.json.warnings_total).toBe(7);
  });

  it('checks a large site in shares side by side, and answers as if one worker had', async () => {
    // 2.4 MB of pages: two shares on two threads (a share is at least 1 MB). Pages and style
    // sheets are shared out each on their own, so a share's files are not one run of the paths.
    const filler = `<p>${'text '.repeat(120_000)}</p>`;
    const pages: Array<readonly [string, string]> = ['a', 'b', 'c', 'd'].map((name) => [`${name}.html`, `${filler}\n<img src="${name}-missing.png">`]);
    const sheets: Array<readonly [string, string]> = ['a', 'z'].map((name) => [`${name}.css`, `a{b:url(${name}-missing.png)}`]);
    const { token } = await accountWithToken(capped.store, 'builder');
    const answer = await deployTo(capped.port, {
      body: jsonDeployBody([['index.html', '<h1>x</h1>'], ...pages, ...sheets]),
      contentType: 'application/json',
      token,
    });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.json.warnings).toEqual([
      { file: 'a.css', line: 1, ref: 'a-missing.png', kind: 'broken_link' },
      { file: 'a.html', line: 2, ref: 'a-missing.png', kind: 'broken_link' },
    ]);
    expect(answer.json.warnings_total).toBe(6);
  });
});
