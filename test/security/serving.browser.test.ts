/// <reference lib="dom" />
// page.evaluate callbacks run in Chromium, where the DOM exists.
import { connect } from 'node:net';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPage } from '../app/browser.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request, type TestResponse } from '../helpers/http.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';
import { badgeShown, CONTENT, containingBlockAttacks, styled } from './badge-pages.js';

/**
 * The site-serving host under attack: tables of hostile inputs, each row an attack with the
 * answer it must get, run against the real server over loopback. Published pages try to hide or
 * drop the "Report abuse" badge, or to push it out of the window by making html or body the
 * box it is placed in (checked in Chromium, as a visitor sees it); requests try to climb out of a
 * site or into another site with odd paths and Host spellings.
 */

let page: Page;
let hostile: string;
let other: string;
const containingBlockSites: string[] = [];

/**
 * Style sheets aimed at the badge: at its attribute, its tags, every element, its position in
 * body. Each would hide it if its inline declarations were not all `!important`. (Rules that hit
 * <html> or <body> themselves hide the site along with it; see docs/serving.md.)
 */
const CSS_ATTACKS: Array<[string, string]> = [
  ['display:none on its attribute (the audit finding)', '[data-plinth-badge]{display:none !important}'],
  ['visibility and opacity on its attribute', '[data-plinth-badge]{visibility:hidden !important;opacity:0 !important}'],
  ['moving it off screen', '[data-plinth-badge]{position:absolute !important;left:-9999px !important;top:-9999px !important}'],
  ['scaling it to nothing', '[data-plinth-badge]{transform:scale(0) !important}'],
  ['clipping it away', '[data-plinth-badge]{clip-path:inset(50%) !important}'],
  ['shrinking it to zero size', '[data-plinth-badge]{width:0 !important;height:0 !important;overflow:hidden !important;padding:0 !important}'],
  ['sending it below the page', '[data-plinth-badge]{z-index:-1 !important} main{position:fixed;inset:0;background:#fff;z-index:10}'],
  ['content-visibility on it', '[data-plinth-badge]{content-visibility:hidden !important}'],
  ['a filter on it', '[data-plinth-badge]{filter:opacity(0) !important}'],
  ['an animation that fades it', '@keyframes gone{to{opacity:0;visibility:hidden}} [data-plinth-badge]{animation:gone 1ms forwards !important}'],
  ['an important rule in a cascade layer', '@layer site{[data-plinth-badge]{display:none !important}}'],
  ['a rule on its style attribute', '[style*="2147483647"]{display:none !important}'],
  ['everything inside it', '[data-plinth-badge] *{display:none !important}'],
  ['every div', 'div{display:none !important}'],
  ['every link', 'a{display:none !important}'],
  ['every link made invisible', 'a{color:transparent !important;font-size:0 !important;pointer-events:none !important}'],
  ['every span and the link after it', 'span,span+a{display:none !important}'],
  ['every element but html and body', '*:not(html):not(body){display:none !important}'],
  ['every element, by visibility', '*{visibility:hidden !important}'],
  ['every element, by font size and colour', '*{font-size:0 !important;color:transparent !important}'],
  ['the last child of body', 'body>:last-child{display:none !important}'],
  ['every last child but html and body', ':last-child:not(html):not(body){display:none !important}'],
  ['every div in body', 'body>div{display:none !important}'],
  ['the last div of the page', 'div:last-of-type{display:none !important}'],
  ['an href aimed at the report link', 'a[href*="report"]{display:none !important}'],
  ['a full-page overlay at the highest z-index, earlier in the page', '#cover{position:fixed;inset:0;background:#fff;z-index:2147483647}'],
];

/**
 * Properties that make html or body the containing block of the badge (badge-pages.ts): each on
 * body and on html, every spelling in turn. The reliability project tries every property in every
 * spelling (test/reliability/badge-containing-blocks.browser.test.ts).
 */
const CONTAINING_BLOCK_ATTACKS = containingBlockAttacks(false);
/** Anonymous sites hold 100 files each: the rows are spread over several. */
const ROWS_PER_SITE = 90;

/** Markup that put the badge where it does not render when it went before the last `</body>` string. */
const STRUCTURE_ATTACKS: Array<[string, string]> = [
  ['a comment holding </body> at the end', `<body>${CONTENT}</body><!-- </body> -->`],
  ['an unclosed textarea', `<body>${CONTENT}<textarea>x</body></html>`],
  ['an unclosed script', `<body>${CONTENT}<script>var a = 1;</body></html>`],
  ['an unclosed style', `<body>${CONTENT}<style>p { color: red }</body></html>`],
  ['an unclosed title', `<body>${CONTENT}<title>x</body></html>`],
  ['an unclosed template', `<body>${CONTENT}<template><p>x</body></html>`],
  ['nested unclosed templates', `<body>${CONTENT}<template><div><template><p>x</body></html>`],
  ['an unclosed xmp', `<body>${CONTENT}<xmp>x</body></html>`],
  ['an unclosed iframe', `<body>${CONTENT}<iframe>x</body></html>`],
  ['an unclosed noscript', `<body>${CONTENT}<noscript>x</body></html>`],
  ['an unclosed noembed', `<body>${CONTENT}<noembed>x</body></html>`],
  ['plaintext', `<body>${CONTENT}<plaintext>x</body></html>`],
  ['a script in the double-escaped state', `<body>${CONTENT}<script><!--<script>x</script></body></html>`],
  ['an unclosed select', `<body>${CONTENT}<select><option>x</body></html>`],
  ['a hidden div inside a select', `<body>${CONTENT}<select><div hidden><p>x</body></html>`],
  ['a hidden formatting element left inside a select', `<body>${CONTENT}<select><b style="display:none"></select></body></html>`],
  ['plaintext inside a select', `<body>${CONTENT}<select><plaintext></select></body></html>`],
  ['a textarea keeping a select open', `<body>${CONTENT}<select><textarea></textarea><div hidden>x</body></html>`],
  ['an unclosed details', `<body>${CONTENT}<details><p>x</body></html>`],
  ['an unclosed dialog', `<body>${CONTENT}<dialog><p>x</body></html>`],
  ['an unclosed div hidden', `<body>${CONTENT}<div hidden><p>x</body></html>`],
  ['an unclosed object that loads (its fallback content is not rendered)', `<body>${CONTENT}<object data="/index.html" type="text/html"><p>x</body></html>`],
  ['an unclosed video', `<body>${CONTENT}<video><p>x</body></html>`],
  ['an unclosed table cell with a hidden div', `<body>${CONTENT}<table><tr><td><div hidden>x</body></html>`],
  ['an unclosed svg foreignObject', `<body>${CONTENT}<svg><foreignObject><div hidden>x</body></html>`],
  [
    'an unclosed MathML annotation (only the first child of semantics is rendered)',
    `<body>${CONTENT}<math><semantics><mi>x</mi><annotation-xml encoding="text/html"><p>x</body></html>`,
  ],
  ['an unclosed CDATA section in svg', `<body>${CONTENT}<svg><![CDATA[x</body></html>`],
  ['a hidden formatting element the parser re-creates', `<body>${CONTENT}<p><b style="display:none">x</p></body></html>`],
  ['a tag cut off at the end of the page', `<body>${CONTENT}<div hidden title="</body>`],
  ['a frameset', '<frameset><frame src="/css-0.html"></frameset>'],
  ['a declarative shadow root on body', `<body><template shadowrootmode="open">${CONTENT}</template></body></html>`],
  ['a frameset that hides a shadow root', `<frameset><template shadowrootmode="open">${CONTENT}</template>`],
  ['an uppercase hidden div', `<BODY>${CONTENT}<DIV HIDDEN><P>x</BODY></HTML>`],
];

/** Markup that leaves elements open only when <noscript> content is parsed, with JavaScript off. */
const NOSCRIPT_ATTACKS: Array<[string, string]> = [
  ['a hidden div opened inside noscript', `<body>${CONTENT}<noscript><div hidden></noscript></body></html>`],
  ['a hidden div inside noscript inside an open div', `<body><div>${CONTENT}<noscript><div hidden></noscript></body></html>`],
];

/** Pages whose bytes make the browser pick another encoding than the charset we send. */
const ENCODING_ATTACKS: Array<[string, Buffer]> = [
  ['a UTF-16LE page', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`<body>${CONTENT}</body>`, 'utf16le')])],
  ['a UTF-16BE page', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(`<body>${CONTENT}</body>`, 'utf16le').swap16()])],
  ['a UTF-8 BOM and a hidden div', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`<body>${CONTENT}<div hidden>x</body>`)])],
];

const fileOf = (kind: string, i: number): string => `${kind}-${i}.html`;

async function deployAnonymous(files: Array<readonly [string, string | Buffer]>): Promise<string> {
  const answer = await deployTo(server.port, { body: jsonDeployBody(files), contentType: 'application/json' });
  expect(answer.status, answer.text).toBe(201);
  return answer.json.site.name as string;
}

const server = useAppServer();

const browser = useBrowser();

beforeAll(async () => {
  hostile = await deployAnonymous([
    ['index.html', styled('')],
    ...CSS_ATTACKS.map(([, css], i) => [fileOf('css', i), styled(css, `<div id="cover"></div>${CONTENT}`)] as const),
    ...STRUCTURE_ATTACKS.map(([, html], i) => [fileOf('structure', i), html] as const),
    ...ENCODING_ATTACKS.map(([, bytes], i) => [fileOf('encoding', i), bytes] as const),
    ...NOSCRIPT_ATTACKS.map(([, html], i) => [fileOf('noscript', i), html] as const),
  ]);
  for (let from = 0; from < CONTAINING_BLOCK_ATTACKS.length; from += ROWS_PER_SITE) {
    const rows = CONTAINING_BLOCK_ATTACKS.slice(from, from + ROWS_PER_SITE);
    containingBlockSites.push(
      await deployAnonymous([['index.html', styled('')], ...rows.map(([, html], i) => [fileOf('containing-block', from + i), html] as const)]),
    );
  }
  other = await deployAnonymous([
    ['index.html', '<!DOCTYPE html><title>Other</title><p>SITE-B-ONLY home</p>'],
    ['b-only.html', '<!DOCTYPE html><title>Other</title><p>SITE-B-ONLY page</p>'],
  ]);
  ({ page } = await openPage(browser));
}, 60_000);

/** Whether a visitor of the path sees the badge ('shown', or what is wrong: badge-pages.ts). */
async function reportLink(path: string, visitor: Page = page, site = hostile): Promise<string> {
  await visitor.goto(`${server.siteUrl(site)}${path}`);
  return badgeShown(visitor);
}

describe('the badge on a hostile page, as Chromium shows it', () => {
  it('is shown on a plain page of an anonymous site', async () => {
    expect(await reportLink('/')).toBe('shown');
  });

  it.each(CSS_ATTACKS.map(([name], i) => [name, i] as const))('survives a style sheet with %s', async (_name, i) => {
    expect(await reportLink(`/${fileOf('css', i)}`)).toBe('shown');
  });

  it.each(STRUCTURE_ATTACKS.map(([name], i) => [name, i] as const))('survives markup with %s', async (_name, i) => {
    expect(await reportLink(`/${fileOf('structure', i)}`)).toBe('shown');
  });

  it.each(CONTAINING_BLOCK_ATTACKS.map(([name], i) => [name, i] as const))('stays in the viewport with %s', async (_name, i) => {
    expect(await reportLink(`/${fileOf('containing-block', i)}`, page, containingBlockSites[Math.floor(i / ROWS_PER_SITE)])).toBe('shown');
    // Scrolled to the end, too.
    expect(await badgeShown(page, true)).toBe('shown');
  });

  it.each(ENCODING_ATTACKS.map(([name], i) => [name, i] as const))('survives %s', async (_name, i) => {
    expect(await reportLink(`/${fileOf('encoding', i)}`)).toBe('shown');
  });

  it.each(NOSCRIPT_ATTACKS.map(([name], i) => [name, i] as const))('survives %s, with JavaScript off', async (_name, i) => {
    // Playwright's default window for a context of its own, as before.
    const { context, page: withoutScript } = await openPage(browser, 1280, { height: 720, javaScriptEnabled: false });
    try {
      expect(await reportLink(`/${fileOf('noscript', i)}`, withoutScript)).toBe('shown');
    } finally {
      await context.close();
    }
  });

  it('links to a report page on the app host, which answers whatever the site does', async () => {
    expect(await reportLink(`/${fileOf('css', 0)}`)).toBe('shown');
    const href = await page.getByRole('link', { name: 'Report abuse' }).first().getAttribute('href');
    expect(href).toBe(`${server.appUrl}/report/${hostile}`);
    const report = await request({ port: server.port, host: 'app.localhost', path: `/report/${hostile}` });
    expect(report.status).toBe(200);
    expect(report.text).toContain('Send report');
  });
});

// --- Requests aimed outside the site, or at another site. ---

const FOREIGN = ['SITE-B-ONLY', 'root:x:0:0', '[core]', 'PLINTH_'];

function expectNoForeignBytes(res: { status: number; text: string }): void {
  expect(res.status).not.toBe(500);
  for (const marker of FOREIGN) expect(res.text).not.toContain(marker);
}

/**
 * Paths that try to leave the site's root, each with the status it gets: 400 for a path that
 * climbs above the root or holds a NUL, 414 past the length limit, 404 for no such file, and
 * 200 where a path without an extension falls back to the site's own index.html (SPEC 4.5.3).
 */
const PATH_ATTACKS: Array<[string, string, number]> = [
  ['an encoded ..', '/%2e%2e/', 400],
  ['encoded .. to /etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', 400],
  ['.. with encoded slashes', '/..%2f..%2fetc%2fpasswd', 400],
  ['half-encoded ..', '/.%2e/.%2e/etc/passwd', 400],
  ['upper-case encoded ..', '/%2E%2E/%2E%2E/etc/passwd', 400],
  ['.. with encoded backslashes', '/..%5c..%5cetc%5cpasswd', 400],
  ['.. with backslashes', '/..\\..\\etc\\passwd', 400],
  ['overlong UTF-8 dots', '/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd', 400],
  ['.. to a file of the other site', '/../b-only.html', 400],
  ['an encoded NUL', '/%00', 400],
  ['an encoded NUL before an extension', '/index.html%00.png', 400],
  ['an encoded NUL in a segment that .. removes', '/a%00/../index.html', 400],
  ['3,000 segments', `/${'a/'.repeat(3000)}`, 414],
  ['a 10,000-byte name', `/${'x'.repeat(10_000)}`, 414],
  ['double-encoded ..', '/%252e%252e/%252e%252e/etc/passwd', 200],
  ['an encoded leading slash', '/%2fetc%2fpasswd', 200],
  ['a double slash', '//etc/passwd', 200],
  ['the other site as a path', '//other.sites.localhost/b-only.html', 404],
  ['the other site as an absolute URL in the path', '/http://other.sites.localhost/b-only.html', 404],
  ['a .git file', '/.git/config', 404],
  ['a .env file', '/.env', 404],
];

/** Host spellings, each with the site (or none) whose bytes it may get. */
const HOST_ATTACKS: Array<[string, (names: { hostile: string; other: string }) => string, 'hostile' | 'other' | 'none']> = [
  ['the other site in capitals', (n) => `${n.other.toUpperCase()}.SITES.LOCALHOST`, 'other'],
  ['the other site with a trailing dot', (n) => `${n.other}.sites.localhost.`, 'other'],
  ['the other site with another port', (n) => `${n.other}.sites.localhost:1`, 'other'],
  ['a label in front of the other site', (n) => `a.${n.other}.sites.localhost`, 'none'],
  ['the other site after an @', (n) => `${n.hostile}.sites.localhost@${n.other}.sites.localhost`, 'none'],
  ['the other site inside the name', (n) => `${n.other}.sites.localhost.${n.hostile}.sites.localhost`, 'none'],
  ['the site domain alone', () => 'sites.localhost', 'none'],
  ['an empty label', () => '.sites.localhost', 'none'],
  ['the app host with a trailing dot', () => 'app.localhost.', 'none'],
  ['the app host in capitals with a port', () => 'APP.LOCALHOST:8080', 'none'],
  ['a site name shaped like the app host', () => 'app.sites.localhost', 'none'],
];

async function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('no answer in 5 s')), 5000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      // A reset after a complete answer still carries the answer.
      if (chunks.length > 0) resolve(Buffer.concat(chunks).toString('latin1'));
      else reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.end(text);
  });
}

const statusOf = (answer: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe('requests aimed outside a site', () => {
  it.each(PATH_ATTACKS)('a path with %s answers nothing outside the site', async (_name, path, status) => {
    const res: TestResponse = await request({ port: server.port, host: `${hostile}.sites.localhost`, path });
    expectNoForeignBytes(res);
    expect(res.status).toBe(status);
    // A 200 is this site's own index page, never a file from elsewhere.
    if (status === 200) expect(res.text).toContain('<title>Styled</title>');
  });

  it.each(HOST_ATTACKS)('a Host of %s reaches only that host', async (_name, host, owner) => {
    const res = await request({ port: server.port, host: host({ hostile, other }), path: '/b-only.html' });
    expect(res.status).not.toBe(500);
    if (owner === 'other') expect(res.text).toContain('SITE-B-ONLY page');
    else expectNoForeignBytes(res);
  });

  // uWS closes the connection without an answer (status 0 here) on a request it cannot parse.
  it.each([
    [
      'an absolute-form target naming another site',
      [0, 400],
      (h: string, o: string) => `GET http://${o}.sites.localhost/b-only.html HTTP/1.1\r\nHost: ${h}.sites.localhost\r\nConnection: close\r\n\r\n`,
    ],
    // The first Host counts (this site has no b-only.html). RFC 9112 asks for a 400; the TLS
    // proxy in front (Caddy, Go's net/http) already answers 400 to such a request.
    [
      'two Host headers, the second another site',
      [404],
      (h: string, o: string) => `GET /b-only.html HTTP/1.1\r\nHost: ${h}.sites.localhost\r\nHost: ${o}.sites.localhost\r\nConnection: close\r\n\r\n`,
    ],
    ['no Host header', [0, 400], () => 'GET /b-only.html HTTP/1.1\r\nConnection: close\r\n\r\n'],
    ['HTTP/1.0 without a Host header', [0, 400, 404], () => 'GET /b-only.html HTTP/1.0\r\n\r\n'],
    [
      'a NUL in the Host header',
      [0, 400],
      (h: string, o: string) => `GET /b-only.html HTTP/1.1\r\nHost: ${o}.sites.localhost\0.${h}.sites.localhost\r\nConnection: close\r\n\r\n`,
    ],
    ['a Host header of 10 KB', [404, 431, 0], () => `GET / HTTP/1.1\r\nHost: ${'a'.repeat(10_000)}.sites.localhost\r\nConnection: close\r\n\r\n`],
  ] as const)('a request with %s gets one of %j and never another site', async (_name, statuses, build) => {
    const answer = await raw(build(hostile, other));
    expect(statuses).toContain(statusOf(answer));
    for (const marker of FOREIGN) expect(answer).not.toContain(marker);
  });
});
