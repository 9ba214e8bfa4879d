import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { analyzeSite } from '../../src/ingest/site-analysis.js';
import { linkCheckShares } from '../../src/sites/deploy-analyze.js';
import { cssRefs, pageRefs, srcsetUrls } from '../../src/ingest/link-refs.js';
import type { SiteFile, SiteRulesLimits } from '../../src/ingest/types.js';
import { contentTypeFor } from '../../src/rules/index.js';

describe('pageRefs', () => {
  it.each([
    ['a link', '<a href="about.html">x</a>', [['about.html', 1]]],
    [
      'an image with srcset',
      '<img src="a.png"\n  srcset="a-1x.png 1x, a-2x.png 2x">',
      [
        ['a.png', 1],
        ['a-1x.png', 2],
        ['a-2x.png', 2],
      ],
    ],
    [
      'a stylesheet and a script',
      '<link rel="stylesheet" href="s.css">\n<script src="app.js"></script>',
      [
        ['s.css', 1],
        ['app.js', 2],
      ],
    ],
    ['no preconnect hints', '<link rel="preconnect" href="https://fonts.example">', []],
    [
      'video poster and source',
      '<video poster="p.jpg"><source src="v.mp4"></video>',
      [
        ['p.jpg', 1],
        ['v.mp4', 1],
      ],
    ],
    ['nothing inside a script', '<script>var s = "<img src=x.png>";</script><img src="y.png">', [['y.png', 1]]],
    ['nothing inside a comment', '<!-- <img src="old.png"> -->\n<img src="new.png">', [['new.png', 2]]],
    ['nothing inside a textarea', '<textarea><a href="no.html"></a></textarea>', []],
    ['url() in a style element', '<style>\n.a { background: url(bg.png) }\n</style>', [['bg.png', 2]]],
    ['url() in a style attribute', '<div style="background:url(\'d.png\')"></div>', [['d.png', 1]]],
    ['entities decoded', '<a href="a.html?x=1&amp;y=2">', [['a.html?x=1&y=2', 1]]],
    ['unquoted attributes', '<img src=plain.png>', [['plain.png', 1]]],
  ])('%s', (_name, html, expected) => {
    expect(pageRefs(html).refs.map((r) => [r.ref, r.line])).toEqual(expected);
  });

  it('reports the base', () => {
    expect(pageRefs('<base href="/docs/"><a href="x">').base).toBe('/docs/');
  });

  // The link check keeps what a content refers to by its sha256, up to 200,000 references: were a
  // reference a view into its page, that would hold up to as many pages in memory.
  it('keeps no page in memory through the references it read', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heapUsed = (): number => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const kept: unknown[] = [];
    const before = heapUsed();
    for (let i = 0; i < 200; i++) {
      // 200 pages of 100 KB (20 MB), each with references longer than V8's shortest slice.
      const page = `<base href="/docs/section-${i}/"><p>${'x'.repeat(100_000)}</p><a href="/pages/page-number-${i}.html"><img srcset="/img/image-${i}-1x.png 1x">`;
      kept.push(pageRefs(`${page}<style>a{b:url(/img/background-${i}.png)}</style><p style="c:url(/img/inline-number-${i}.png)">`));
      kept.push(cssRefs(`${'y'.repeat(100_000)}\na{b:url(/img/sheet-image-${i}.png)}\n@import "/css/imported-sheet-${i}.css";`));
    }
    expect(heapUsed() - before).toBeLessThan(4 * 1024 * 1024);
    expect(kept).toHaveLength(400);
  });
});

describe('srcsetUrls', () => {
  it.each([
    ['a.png 1x, b.png 2x', ['a.png', 'b.png']],
    ['a.png', ['a.png']],
    ['a,b.png 100w,c.png 200w', ['a,b.png', 'c.png']],
    ['  a.png  ,  b.png 2x ', ['a.png', 'b.png']],
    ['', []],
  ])('%j', (value, expected) => {
    expect(srcsetUrls(value)).toEqual(expected);
  });
});

describe('cssRefs', () => {
  it.each([
    [
      'url() in its forms',
      'a{b:url(x.png)}\nc{d:url("y.png")}\ne{f:url( \'z.png\' )}',
      [
        ['x.png', 1],
        ['y.png', 2],
        ['z.png', 3],
      ],
    ],
    [
      '@import',
      '@import "reset.css";\n@import url(theme.css);',
      [
        ['reset.css', 1],
        ['theme.css', 2],
      ],
    ],
    ['not in comments, lines kept', '/* url(no.png)\n */\na{b:url(yes.png)}', [['yes.png', 3]]],
    ['an unterminated comment', 'a{b:url(x.png)} /* url(no.png)', [['x.png', 1]]],
  ])('%s', (_name, css, expected) => {
    expect(cssRefs(css).map((r) => [r.ref, r.line])).toEqual(expected);
  });
});

const LIMITS: SiteRulesLimits = {
  redirects: { maxEntries: 2000, maxLineChars: 1000, maxFileBytes: 1 << 20 },
  headers: { maxEntries: 100, maxLineChars: 2000, maxFileBytes: 1 << 20 },
  maxWarnings: 50,
};

function analyze(files: Record<string, string>, limits = LIMITS) {
  const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
  const site: SiteFile[] = Object.entries(files).map(([path, text]) => ({
    path,
    sha256: sha256(text),
    size: Buffer.byteLength(text),
    type: contentTypeFor(path),
  }));
  return analyzeSite(site, (file) => Buffer.from(files[file.path]!), limits);
}

const brokenRefs = (files: Record<string, string>): string[] => {
  const result = analyze(files);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return (result.extras.warnings ?? []).map((w) => `${w.file}:${w.line} ${w.ref}`);
};

describe('the link check', () => {
  it.each([
    ['a relative asset of a folder page', { 'index.html': '', 'reveal/index.html': '<link href="dist/reveal.css">', 'reveal/dist/reveal.css': '' }, []],
    ['the same asset missing', { 'index.html': '', 'reveal/index.html': '<link href="dist/reveal.css">' }, ['reveal/index.html:1 dist/reveal.css']],
    ['a folder address and a clean URL', { 'index.html': '<a href="/docs">d</a><a href="about">a</a>', 'docs/index.html': '', 'about.html': '' }, []],
    ['.. from a nested page', { 'index.html': '', 'a/b/page.html': '<img src="../../img/x.png">', 'img/x.png': '' }, []],
    ['.. above the root clamps, as in a browser', { 'index.html': '<img src="../../x.png">', 'x.png': '' }, []],
    [
      'a fragment and a query are ignored',
      { 'index.html': '<a href="about.html#team">a</a><a href="about.html?x=1">b</a><a href="#top">c</a>', 'about.html': '' },
      [],
    ],
    [
      'external and special references are not checked',
      {
        'index.html':
          '<a href="https://x.example/a">a</a><a href="//cdn.example/x.js">b</a><a href="mailto:a@b.c">c</a><a href="javascript:void(0)">d</a><img src="data:image/png;base64,AA">',
      },
      [],
    ],
    ['template syntax is not checked', { 'index.html': '<a href="{{ url }}">a</a><img src="${src}">' }, []],
    ['a path to a skipped file leads nowhere', { 'index.html': '<a href="/.env">x</a>' }, ['index.html:1 /.env']],
    ['the rules files lead nowhere', { 'index.html': '<a href="/_redirects">x</a>', _redirects: '/a /b' }, ['index.html:1 /_redirects']],
    ['a redirect rule leads somewhere', { 'index.html': '<a href="/old">x</a>', _redirects: '/old /new 301' }, []],
    ['a 404 rule leads nowhere', { 'index.html': '<a href="/gone/x">x</a>', _redirects: '/gone/* /index.html 404' }, ['index.html:1 /gone/x']],
    ['the 404 page counts as nowhere', { 'index.html': '<a href="/nope">x</a>', '404.html': '' }, ['index.html:1 /nope']],
    ['an extensionless address is the single-page-app shell without a 404 page', { 'index.html': '<a href="/settings">x</a>' }, []],
    [
      'CSS url() relative to the style sheet',
      { 'index.html': '', 'css/site.css': 'a{background:url(../img/bg.png)}\n@import "missing.css";', 'img/bg.png': '' },
      ['css/site.css:2 missing.css'],
    ],
    ['a <base> of this site', { 'index.html': '<base href="/docs/"><img src="logo.png">', 'docs/logo.png': '' }, []],
    ['a <base> of another site turns the check off', { 'index.html': '<base href="https://cdn.example/"><img src="logo.png">' }, []],
    ['a malformed escape leads nowhere', { 'index.html': '<a href="/a%zz">x</a>' }, ['index.html:1 /a%zz']],
    [
      'references written in upper case',
      { 'index.html': '<A HREF="/a.html">a</A>\n<IMG SRC=b.png><VIDEO POSTER=c.png>\n<DIV STYLE="x:url(d.png)"><STYLE>@IMPORT "e.css";</STYLE>' },
      ['index.html:1 /a.html', 'index.html:2 b.png', 'index.html:2 c.png', 'index.html:3 d.png', 'index.html:3 e.css'],
    ],
    ['a reference far down a page', { 'index.html': `${'<p class="x">text</p>\n'.repeat(5000)}<Img SrcSet="f.png 2x">` }, ['index.html:5001 f.png']],
  ])('%s', (_name, files, expected) => {
    expect(brokenRefs(files as Record<string, string>)).toEqual(expected);
  });

  it('lists at most maxWarnings and counts them all; 0 lists every one', () => {
    const html = Array.from({ length: 10 }, (_, i) => `<img src="m${i}.png">`).join('\n');
    const capped = analyze({ 'index.html': html }, { ...LIMITS, maxWarnings: 3 });
    expect(capped.ok && [capped.extras.warnings?.length, capped.extras.warningsTotal]).toEqual([3, 10]);
    const all = analyze({ 'index.html': html }, { ...LIMITS, maxWarnings: 0 });
    expect(all.ok && all.extras.warnings?.length).toBe(10);
  });

  it('reads and tokenizes a content once, however many deploys and paths have it', () => {
    const page = '<img src="shared-missing.png">';
    let reads = 0;
    const site = (path: string): SiteFile[] => [
      { path, sha256: createHash('sha256').update(page).digest('hex'), size: page.length, type: 'text/html; charset=utf-8' },
    ];
    const read = (): Buffer => {
      reads++;
      return Buffer.from(page);
    };
    const first = analyzeSite(site('a.html'), read, LIMITS);
    const second = analyzeSite(site('deep/b.html'), read, LIMITS);
    expect(reads).toBe(1);
    // Resolved against each file's own folder, so the same content warns for each path.
    expect(first.ok && first.extras.warnings).toEqual([{ file: 'a.html', line: 1, ref: 'shared-missing.png', kind: 'broken_link' }]);
    expect(second.ok && second.extras.warnings).toEqual([{ file: 'deep/b.html', line: 1, ref: 'shared-missing.png', kind: 'broken_link' }]);
  });

  it('stores nothing for a site without rules or warnings', () => {
    expect(analyze({ 'index.html': '<a href="/">home</a>' })).toEqual({ ok: true, extras: {} });
  });

  it('refuses a bad rules file with file, line and reason, before checking links', () => {
    const result = analyze({ 'index.html': '', _headers: '/*\n  Set-Cookie: a=1' });
    expect(result).toMatchObject({ ok: false, error: { code: 'bad_request', details: { file: '_headers', line: 2, reason: 'header_not_allowed' } } });
  });

  it('refuses an oversized rules file by its size, without reading it', () => {
    const site: SiteFile[] = [
      { path: 'index.html', sha256: 'i', size: 1, type: 'text/html; charset=utf-8' },
      { path: '_redirects', sha256: 'r', size: 2 << 20, type: 'application/octet-stream' },
    ];
    const result = analyzeSite(site, (file) => (file.path === '_redirects' ? Buffer.from('never read') : Buffer.from('')), LIMITS);
    expect(result).toMatchObject({ ok: false, error: { details: { file: '_redirects', line: 0, reason: 'file_too_large' } } });
  });
});

describe('linkCheckShares', () => {
  const file = (path: string, size: number): SiteFile => ({ path, sha256: path, size, type: contentTypeFor(path) });
  const MB = 1024 * 1024;

  it.each([
    ['a small site: one task for all', [file('index.html', 1000), file('a.css', 1000)], 2, [undefined]],
    ['one thread: one task for all', [file('a.html', 3 * MB), file('b.html', 3 * MB)], 1, [undefined]],
    [
      'two threads, equal pages',
      [file('a.html', MB), file('b.html', MB), file('c.html', MB), file('d.html', MB)],
      2,
      [
        ['a.html', 'b.html'],
        ['c.html', 'd.html'],
      ],
    ],
    ['images are not shared out', [file('a.html', 2 * MB), file('big.png', 50 * MB), file('b.css', 2 * MB)], 4, [['a.html'], ['b.css']]],
    [
      // A page costs more to read than a style sheet of its size: each share has some of both.
      'pages and style sheets cut each on its own, paired in opposite orders',
      [file('a.css', MB), file('b.css', MB), file('c.css', MB), file('a.html', 2 * MB), file('b.html', MB), file('c.html', MB)],
      2,
      [
        ['a.html', 'c.css'],
        ['a.css', 'b.css', 'b.html', 'c.html'],
      ],
    ],
    ['one large page and small style sheets', [file('a.css', 1000), file('b.css', 1000), file('big.html', 4 * MB)], 2, [['b.css', 'big.html'], ['a.css']]],
    ['no more shares than files', [file('only.html', 10 * MB)], 4, [undefined]],
  ])('%s', (_name, site, threads, expected) => {
    expect(linkCheckShares(site, threads)).toEqual(expected);
  });
});
