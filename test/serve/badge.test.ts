import { describe, expect, it } from 'vitest';
import { injectBadge } from '../../src/serve/badge.js';

const OPTIONS = { siteName: 'my-site', reportUrl: 'https://plinth.example/report/my-site' };
const MARK = '<div data-plinth-badge';

function inject(html: string, options = OPTIONS): string {
  return injectBadge(Buffer.from(html, 'utf8'), options).toString('utf8');
}

/** The page with the badge cut out, to show nothing else moved. */
function withoutBadge(out: string): string {
  const start = out.indexOf(MARK);
  const end = out.indexOf('</div>', start) + '</div>'.length;
  return out.slice(0, start) + out.slice(end);
}

describe('injectBadge', () => {
  it.each([
    ['a plain page', '<html><body><p>hi</p></body></html>', '<p>hi</p>', '</body></html>'],
    ['an uppercase closing tag', '<HTML><BODY>x</BODY></HTML>', 'x', '</BODY></HTML>'],
    ['a mixed-case closing tag', '<body>x</BoDy>', 'x', '</BoDy>'],
    ['a closing tag with a space', '<body>x</body >', 'x', '</body >'],
    ['a closing tag with a newline', '<body>x</body\n>', 'x', '</body\n>'],
    ['an earlier closing tag in a comment', '<body><!-- </body> -->x</body>', 'x', '</body>'],
    ['an earlier closing tag in a script', '<body><script>s="</body>"</script>y</body>', 'y', '</body>'],
    ['two closing tags', '<body>a</body>b</body>', 'b', '</body>'],
    ['a closing tag at the very start', '</body>', '', '</body>'],
    ['non-ASCII content', '<body>café 日本</body>', '日本', '</body>'],
  ])('inserts the badge before the last </body> in %s', (_name, html, before, after) => {
    const out = inject(html);
    expect(out.split(MARK)).toHaveLength(2);
    expect(out.slice(0, out.indexOf(MARK)).endsWith(before)).toBe(true);
    expect(out.slice(out.indexOf('</div>', out.indexOf(MARK)) + 6)).toBe(after);
    expect(withoutBadge(out)).toBe(html);
  });

  it.each([
    ['a page without body', '<h1>Hello</h1>'],
    ['an empty page', ''],
    ['a page with </bodyx>', '<body>x</bodyx>'],
    ['a page with </tbody> only', '<table><tbody></tbody></table>'],
    ['a page with a lone </', '<p>a </ b</p>'],
    ['a page ending in </', 'x</'],
  ])('appends the badge to %s', (_name, html) => {
    const out = inject(html);
    expect(out.startsWith(html)).toBe(true);
    expect(out.slice(html.length).startsWith(MARK)).toBe(true);
    expect(out.endsWith('</div>')).toBe(true);
  });

  it.each([
    ['a link to the report URL', 'href="https://plinth.example/report/my-site"'],
    ['the report link text', '>Report abuse</a>'],
    ['nofollow noopener', 'rel="nofollow noopener"'],
    ['a new tab', 'target="_blank"'],
    ['fixed positioning', 'position:fixed !important'],
    ['the bottom-right corner', 'right:12px !important;bottom:12px !important'],
    ['the highest z-index', 'z-index:2147483647 !important'],
    ['the published-with text', 'Published with Plinth'],
  ])('contains %s', (_name, fragment) => {
    expect(inject('<body></body>')).toContain(fragment);
  });

  it.each([
    ['a script', /<script/i],
    ['an event handler', /\son[a-z]+=/i],
    ['an external resource', /\b(src|srcset)=|url\(|@import/i],
    ['a javascript: URL', /javascript:/i],
  ])('contains no %s', (_name, pattern) => {
    expect(inject('<body></body>')).not.toMatch(pattern);
  });

  it('marks every inline declaration !important and starts each element from all:initial', () => {
    const styles = [...inject('<body></body>').matchAll(/ style="([^"]*)"/g)].map((m) => m[1]!);
    expect(styles).toHaveLength(3);
    for (const style of styles) {
      const declarations = style.split(';');
      expect(declarations[0]).toBe('all:initial !important');
      for (const declaration of declarations) expect(declaration).toMatch(/^[a-z-]+:[^;]+ !important$/);
    }
  });

  it('names no font family a site could redefine with @font-face', () => {
    for (const [, families] of inject('<body></body>').matchAll(/font:[^;]*?px\/[\d.]+ ([^;!]*)/g)) {
      expect(families!.trim().split(',')).toEqual(['system-ui', 'sans-serif']);
    }
  });

  it.each([
    ['a quote in the report URL', 'https://x.example/report/a"onmouseover="alert(1)', 'a&quot;onmouseover=&quot;alert(1)'],
    ['angle brackets in the report URL', 'https://x.example/r/<script>', '&lt;script&gt;'],
    ['an ampersand in the report URL', 'https://x.example/r?a=1&b=2', 'a=1&amp;b=2'],
    ['a single quote in the report URL', "https://x.example/r/'x", '&#39;x'],
  ])('escapes %s', (_name, reportUrl, escaped) => {
    const out = inject('<body></body>', { siteName: 'x', reportUrl });
    expect(out).toContain(escaped);
    expect(out).not.toContain('<script');
    expect(out).not.toContain('"onmouseover');
  });

  it.each([
    ['markup in the site name', '<img src=x onerror=alert(1)>', '&lt;img src=x onerror=alert(1)&gt;'],
    ['quotes in the site name', '"x\'', '&quot;x&#39;'],
    ['non-ASCII in the site name', 'café', 'caf&#xe9;'],
  ])('escapes %s', (_name, siteName, escaped) => {
    const out = inject('<body></body>', { siteName, reportUrl: OPTIONS.reportUrl });
    expect(out).toContain(escaped);
    expect(out).not.toContain('<img');
  });

  it('keeps the badge ASCII so it reads the same in any ASCII-compatible charset', () => {
    const badge = inject('', { siteName: 'naïve-日本', reportUrl: 'https://x.example/r/naïve' });
    expect(/^[\x20-\x7e]*$/.test(badge)).toBe(true);
  });

  it('leaves non-UTF-8 bytes around the insertion point untouched', () => {
    const html = Buffer.from([0x3c, 0x62, 0x3e, 0xe9, 0xff, 0x3c, 0x2f, 0x62, 0x6f, 0x64, 0x79, 0x3e]);
    const out = injectBadge(html, OPTIONS);
    const at = out.indexOf(MARK);
    expect(out.subarray(0, at)).toEqual(html.subarray(0, 5));
    expect(out.subarray(out.length - 7)).toEqual(html.subarray(5));
  });
});
