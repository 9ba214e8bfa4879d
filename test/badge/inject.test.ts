import fc from 'fast-check';
import { parse, type DefaultTreeAdapterTypes as T } from 'parse5';
import { describe, expect, it } from 'vitest';
import { badgeCorner, badgeMarkup, injectBadge } from '../../src/badge/index.js';

const OPTIONS = { siteName: 'my-site', reportUrl: 'https://plinth.example/report/my-site' };
const MARK = '<div data-plinth-badge';
/** What is inserted, of either kind: the shadow root for body (usual), or the bare pill. */
const MARKUP = badgeMarkup(OPTIONS, 'bottom-left');

function inject(html: string, options = OPTIONS): string {
  return injectBadge(Buffer.from(html, 'utf8'), options).toString('utf8');
}

/** The length of the badge's markup (of either kind) that starts at `at` in `text`, or 0. */
function badgeLengthAt(text: string, at: number): number {
  for (const markup of [MARKUP.shadow, MARKUP.bare]) if (text.startsWith(markup, at)) return markup.length;
  return 0;
}

/** Offsets where a badge's markup starts in `text`. */
function badgeStarts(text: string): number[] {
  const starts: number[] = [];
  for (let at = text.indexOf(MARK); at !== -1; at = text.indexOf(MARK, at + 1)) {
    const length = badgeLengthAt(text, at);
    if (length > 0) {
      starts.push(at);
      at += length - 1;
    }
  }
  return starts;
}

/** The page with the badge cut out, to show nothing else moved. */
function withoutBadge(out: string): string {
  const start = badgeStarts(out)[0]!;
  return out.slice(0, start) + out.slice(start + badgeLengthAt(out, start));
}

/** The page with each badge written as [B]. */
const marked = (out: string): string => out.replaceAll(MARKUP.shadow, '[B]').replaceAll(MARKUP.bare, '[B]');

// --- What a browser builds, read with parse5's public parse(), independently of src/serve. ---

const HTML_NS = 'http://www.w3.org/1999/xhtml';
const isElement = (node: T.Node | undefined, name: string): node is T.Element =>
  node !== undefined && 'tagName' in node && node.tagName === name && node.namespaceURI === HTML_NS;
const textOf = (node: T.Element): string | undefined =>
  node.childNodes.length === 1 && node.childNodes[0]!.nodeName === '#text' ? (node.childNodes[0] as T.TextNode).value : undefined;
const attr = (node: T.Element, name: string): string | undefined => node.attrs.find((a) => a.name === name)?.value;

/** The badge as built: a div with exactly a span and a link inside, each holding only its text. */
function isIntactBadge(node: T.ChildNode, reportUrl: string): boolean {
  if (!isElement(node, 'div') || attr(node, 'data-plinth-badge') === undefined || node.childNodes.length !== 2) return false;
  const [span, link] = node.childNodes;
  return (
    isElement(span, 'span') &&
    textOf(span) === 'Published with Plinth' &&
    isElement(link, 'a') &&
    attr(link, 'href') === reportUrl &&
    textOf(link) === 'Report abuse'
  );
}

/**
 * Where the badge renders no matter what the markup around it does: a direct child of <body>,
 * or, when body is a declarative shadow host (its first <template shadowrootmode=open|closed>
 * child), a direct child of that shadow tree.
 */
function badgeRendered(text: string, scriptingEnabled: boolean, reportUrl = OPTIONS.reportUrl): boolean {
  const document = parse(text, { scriptingEnabled });
  const html = document.childNodes.find((node): node is T.Element => isElement(node, 'html'));
  const body = html?.childNodes.find((node): node is T.Element => isElement(node, 'body'));
  if (body === undefined) return false;
  const host = body.childNodes.find(
    (node): node is T.Template => isElement(node, 'template') && ['open', 'closed'].includes(attr(node, 'shadowrootmode')?.toLowerCase() ?? ''),
  );
  return (host?.content ?? body).childNodes.some((child) => isIntactBadge(child, reportUrl));
}

/** The text a browser parses from served bytes: BOM sniffed (it wins over the charset), else UTF-8. */
function decodeServed(bytes: Buffer): string {
  const utf16 = (le: Buffer): string => le.toString('utf16le', 0, le.length - (le.length % 2)) + (le.length % 2 ? '\uFFFD' : '');
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return utf16(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    const be = bytes.subarray(2);
    const even = Buffer.from(be.subarray(0, be.length - (be.length % 2))).swap16();
    return utf16(be.length % 2 ? Buffer.concat([even, be.subarray(-1)]) : even);
  }
  return new TextDecoder('utf-8').decode(bytes);
}

/** Lengths of the runs of end tags (or a leading `]]>`) that can end `text` at `at`, shortest first. */
function closerRuns(text: string, at: number): number[] {
  const runs = [0];
  let from = at;
  for (;;) {
    const open = text.lastIndexOf('</', from - 1);
    if (open === -1 || !/^<\/[^\t\n\f\r />]+>$/.test(text.slice(open, from))) break;
    from = open;
    runs.push(at - from);
  }
  if (text.slice(from - 3, from) === ']]>') runs.push(at - from + 3);
  return runs;
}

/**
 * True when `text` is `source` with badges inserted, each after a run of end tags: nothing of the
 * page itself moved or changed. (Usually one badge; a page whose rest parses differently once a
 * badge is in, such as a frameset, may get a second.)
 */
function onlyInserted(text: string, source: string): boolean {
  const start = badgeStarts(text)[0];
  if (start === undefined) return text === source;
  const end = start + badgeLengthAt(text, start);
  return closerRuns(text, start).some((length) => onlyInserted(text.slice(0, start - length) + text.slice(end), source));
}

/** The inserted end tags before the (last) badge, after checking the rest of the page is unchanged. */
function insertedPart(page: Buffer, out: Buffer): { closers: string } {
  const text = decodeServed(out);
  expect(badgeStarts(text).length, 'no badge markup at all').toBeGreaterThan(0);
  expect(onlyInserted(text, decodeServed(page)), text).toBe(true);
  const start = badgeStarts(text).at(-1)!;
  return { closers: text.slice(start - Math.max(...closerRuns(text, start)), start) };
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
    ['an earlier closing tag in an attribute', '<body><p title="</body>">y</p></body>', '</p>', '</body>'],
    ['two closing tags', '<body>a</body>b</body>', 'b', '</body>'],
    ['a closing tag at the very start', '</body>', '', '</body>'],
    ['non-ASCII content', '<body>café 日本</body>', '日本', '</body>'],
  ])('inserts the badge before the last </body> in %s', (_name, html, before, after) => {
    const out = inject(html);
    expect(badgeStarts(out)).toHaveLength(1);
    const start = badgeStarts(out)[0]!;
    expect(out.startsWith(MARKUP.shadow, start)).toBe(true);
    expect(out.slice(0, start).endsWith(before)).toBe(true);
    expect(out.slice(start + MARKUP.shadow.length)).toBe(after);
    expect(withoutBadge(out)).toBe(html);
  });

  it.each([
    ['a page without body', '<h1>Hello</h1>'],
    ['an empty page', ''],
    ['a page with </bodyx>', '<body>x</bodyx>'],
    ['a page with </tbody> only', '<table><tbody></tbody></table>'],
    ['a page with a lone </', '<p>a </ b</p>'],
  ])('appends the badge to %s', (_name, html) => {
    const out = inject(html);
    expect(out).toBe(html + MARKUP.shadow);
  });

  it.each([
    ['a link to the report URL', 'href="https://plinth.example/report/my-site"'],
    ['the report link text', '>Report abuse</a>'],
    ['nofollow noopener', 'rel="nofollow noopener"'],
    ['a new tab', 'target="_blank"'],
    ['fixed positioning', 'position:fixed !important'],
    ['the bottom-left corner, away from the busy bottom-right one', 'left:12px !important;bottom:12px !important'],
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
    // The pill in the shadow root and its light copy, and the room the shadow root keeps for it.
    expect(styles).toHaveLength(7);
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
    expect(badgeRendered(out, true, reportUrl)).toBe(true);
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

  it("gives body a shadow root that slots the page's content and holds the pill, with a light copy for browsers without one", () => {
    const document = parse(inject('<body><p>x</p></body>'));
    const body = (document.childNodes.find((n) => isElement(n, 'html')) as T.Element).childNodes.find((n) => isElement(n, 'body')) as T.Element;
    const [p, copy, host, style] = body.childNodes as T.Element[];
    expect(p!.tagName).toBe('p');
    expect(isIntactBadge(copy!, OPTIONS.reportUrl)).toBe(true);
    expect(attr(copy!, 'slot')).toBe('plinth-badge');
    expect(host!.tagName).toBe('template');
    expect(attr(host!, 'shadowrootmode')).toBe('open');
    const shadow = (host as T.Template).content.childNodes as T.Element[];
    expect(shadow.map((node) => node.tagName)).toEqual(['style', 'slot', 'div', 'div']);
    expect(shadow[1]!.attrs).toEqual([]);
    // Room at the page's end, so its last lines can be scrolled clear of the pill.
    expect(attr(shadow[2]!, 'data-plinth-room')).toBe('');
    expect(shadow[2]!.childNodes).toEqual([]);
    expect(isIntactBadge(shadow[3]!, OPTIONS.reportUrl)).toBe(true);
    expect(style!.tagName).toBe('style');
    expect(body.childNodes).toHaveLength(4);
  });

  it.each([
    ['transform:none'],
    ['translate:none'],
    ['rotate:none'],
    ['scale:none'],
    ['perspective:none'],
    ['transform-style:flat'],
    ['contain:none'],
    ['content-visibility:visible'],
    ['will-change:auto'],
    ['offset-path:none'],
    ['clip-path:none'],
    ['mask:none'],
  ])('sets %s !important on body (from its shadow root) and on html', (declaration) => {
    const styles = [...MARKUP.shadow.matchAll(/<style>([^<]*)<\/style>/g)].map((m) => m[1]!);
    expect(styles).toHaveLength(2);
    const rules = styles.flatMap((css) => [...css.matchAll(/([^{}]+)\{([^}]*)\}/g)].map((m) => [m[1]!, m[2]!.split(';')] as const));
    for (const selector of [':host', ':root:not(#plinth-badge#plinth-badge)', ':root:not(#plinth-badge#plinth-badge)>body']) {
      const declarations = rules.find(([found]) => found === selector)?.[1];
      expect(declarations, selector).toContain(`${declaration} !important`);
    }
  });

  it('leaves a filter on html alone (it does not make html a containing block), and turns it off on body', () => {
    expect(MARKUP.shadow).toMatch(/:host\{[^}]*filter:none !important;backdrop-filter:none !important/);
    expect(MARKUP.shadow).not.toMatch(/:root:not\(#plinth-badge#plinth-badge\)\{[^}]*filter/);
  });

  it('keeps the badge ASCII so it reads the same in any ASCII-compatible charset', () => {
    const badge = inject('', { siteName: 'naïve-日本', reportUrl: 'https://x.example/r/naïve' });
    expect(/^[\x20-\x7e]*$/.test(badge)).toBe(true);
  });

  it('leaves non-UTF-8 bytes around the insertion point untouched', () => {
    const html = Buffer.concat([Buffer.from('<body>'), Buffer.from([0xe9, 0xff, 0xc3]), Buffer.from('</body>')]);
    const out = injectBadge(html, OPTIONS);
    const at = out.indexOf(MARK);
    expect(out.subarray(0, at)).toEqual(html.subarray(0, 9));
    expect(out.subarray(out.length - 7)).toEqual(html.subarray(9));
  });
});

/**
 * Pages that hid or dropped the badge when it was spliced in before the last `</body>` string,
 * each with the markup trick it uses. The answer must always be the same: in the tree the
 * browser builds, the badge is a direct child of body with its span, link and text intact, with
 * scripting on and off, and nothing of the page moved except end tags inserted before it.
 */
const HOSTILE: Array<[string, string]> = [
  ['a comment holding </body> at the end', '<body><p>x</p></body><!-- </body> -->'],
  ['a page ending in <!-- </body> --> with no real </body>', '<body><p>x</p><!-- </body> -->'],
  ['an unclosed textarea before </body>', '<body><textarea>x</body></html>'],
  ['an unclosed script before </body>', '<body><script>var a = 1;</body></html>'],
  ['an unclosed style before </body>', '<body><style>p { color: red }</body></html>'],
  ['an unclosed title before </body>', '<body><title>x</body></html>'],
  ['an unclosed xmp', '<body><xmp>x</body></html>'],
  ['an unclosed iframe', '<body><iframe>x</body></html>'],
  ['an unclosed noscript', '<body><noscript>x</body></html>'],
  ['an unclosed noembed', '<body><noembed>x</body></html>'],
  ['an unclosed noframes', '<body><noframes>x</body></html>'],
  ['plaintext', '<body><plaintext>x</body></html>'],
  ['plaintext as the first thing in the page', '<plaintext></body>'],
  ['a script entering the double-escaped state', '<body><script><!--<script>x</script></body></html>'],
  ['a script left in the escaped state', '<body><script><!--x</body></html>'],
  ['an unclosed template', '<body><template><p>x</body></html>'],
  ['nested unclosed templates', '<body><template><div><template><p>x</body></html>'],
  ['an unclosed select', '<body><select><option>x</body></html>'],
  ['an unclosed details', '<body><details><p>x</body></html>'],
  ['an unclosed dialog', '<body><dialog><p>x</body></html>'],
  ['an unclosed div hidden', '<body><div hidden><p>x</body></html>'],
  ['an unclosed div hidden in uppercase', '<BODY><DIV HIDDEN><P>x</BODY></HTML>'],
  ['an unclosed object (fallback content)', '<body><object data="x.png"><p>x</body></html>'],
  ['an unclosed video (fallback content)', '<body><video><p>x</body></html>'],
  ['an unclosed canvas (fallback content)', '<body><canvas><p>x</body></html>'],
  ['an unclosed button', '<body><button><p>x</body></html>'],
  ['an unclosed link of the site', '<body><a href="https://elsewhere.example/">x</body></html>'],
  ['an unclosed table cell, where </body> is ignored', '<body><table><tr><td><div hidden>x</body></html>'],
  ['an unclosed svg desc (an HTML integration point)', '<body><svg><desc><p>x</body></html>'],
  ['an unclosed svg foreignObject', '<body><svg><foreignObject><div hidden>x</body></html>'],
  ['an unclosed math mi', '<body><math><mi>x</body></html>'],
  ['an unclosed CDATA section in svg', '<body><svg><![CDATA[x</body></html>'],
  ['a CDATA section cut after ]', '<body><svg><![CDATA[x]'],
  ['a hidden formatting element re-created by the parser', '<body><p><b style="display:none">x</p></body></html>'],
  ['two hidden formatting elements re-created', '<body><p><i hidden><b style="display:none">x</p></body></html>'],
  ['a hidden link re-created by the parser', '<body><p><a href="/x" style="display:none">x</p></body></html>'],
  ['a hidden formatting element re-created after a table', '<body><p><b style="display:none">x</p><table><tr><td>y</td></tr></table></body></html>'],
  ['</body> inside an attribute value at the end', '<body>x</body><p title="</body>">'],
  ['</body> inside a trailing template', '<body>x</body><template></body></template>'],
  ['a tag cut off inside an attribute value', '<body>x<div hidden title="</body>'],
  ['a page ending in </', '<body>x</'],
  ['a page ending in <!', '<body>x<!'],
  ['a page ending in an unclosed comment', '<body>x<!-- </body>'],
  ['a page ending in an unclosed doctype', '<body>x<!DOCTYPE html'],
  ['no body tag and an unclosed title', '<title>x'],
  ['no body tag and an unclosed template in head', '<head><template><p>x'],
  ['a frameset document', '<frameset><frame src="/x.html"></frameset>'],
  ['a frameset after head', '<!DOCTYPE html><html><head><title>x</title></head><frameset><frame src="/x.html"></frameset></html>'],
  ['a declarative shadow root on body', '<body><template shadowrootmode="open"><p>x</p></template></body></html>'],
  ['a closed declarative shadow root, its mode in capitals', '<body><template shadowrootmode="CLOSED"><p>x</p></template></body></html>'],
  ['a shadow root with an unclosed textarea', '<body><template shadowrootmode="open"><p>x<textarea></template></body>'],
  ['noscript content that leaves a hidden div open with scripting off', '<body><noscript><div hidden></noscript></body></html>'],
  ['noscript content that leaves a hidden div open, and an unclosed div', '<body><div><noscript><div hidden></noscript></body></html>'],
  ['an element name with a NUL in it', '<body><di\u0000v hidden>x</body></html>'],
];

describe('injectBadge on hostile pages', () => {
  it.each(HOSTILE)('keeps the badge a direct, intact child of body with %s', (_name, html) => {
    const page = Buffer.from(html, 'utf8');
    const out = injectBadge(page, OPTIONS);
    const text = decodeServed(out);
    expect(badgeRendered(text, true), text).toBe(true);
    expect(badgeRendered(text, false), text).toBe(true);
    const { closers } = insertedPart(page, out);
    expect(closers).toMatch(/^(\]\]>)?(<\/[^\t\n\f\r />]+>)*$/);
  });

  it.each([
    ['a UTF-8 byte-order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<body><div hidden>x</body>')])],
    ['a UTF-16LE page', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<body><p>x</p></body>', 'utf16le')])],
    ['a UTF-16BE page', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('<body><p>x</p></body>', 'utf16le').swap16()])],
    ['a UTF-16LE page with an odd last byte', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<body><div hidden>x', 'utf16le'), Buffer.from([0x41])])],
  ])('keeps the badge rendered in a page that starts with %s, in the encoding it picks', (_name, page) => {
    const out = injectBadge(page, OPTIONS);
    const text = decodeServed(out);
    expect(badgeRendered(text, true), text).toBe(true);
    insertedPart(page, out);
  });

  it.each([
    ['before an unclosed textarea', '<body><p>x</p><textarea>y', '<body><p>x</p>[B]<textarea>y'],
    ['before an unclosed script, after the page text', '<body><p>x</p><script>y</body>', '<body><p>x</p>[B]<script>y</body>'],
    ['after closing what is left open', '<body><div hidden><p>x</body>', '<body><div hidden><p>x</p></div>[B]</body>'],
    ['after removing a stale formatting element', '<body><p><b hidden>x</p></body>', '<body><p><b hidden>x</p></b>[B]</body>'],
    ['after the comment it would have landed in', '<body>x<!-- </body> -->', '<body>x<!-- </body> -->[B]'],
    ['before the real </body>, not the commented one', '<body>x</body><!-- </body> -->', '<body>x[B]</body><!-- </body> -->'],
    ['after ending a CDATA section', '<body><svg><![CDATA[x', '<body><svg><![CDATA[x]]></svg>[B]'],
    ['before a tag cut off by the end of the page', '<body>x<div a="', '<body>x[B]<div a="'],
    ['before an unclosed select (browsers parse its content as elements)', '<body><select><div hidden>x</body>', '<body>[B]<select><div hidden>x</body>'],
    [
      'before a select whose content browsers read differently',
      '<body><p>x</p><select><b hidden></select><p>y</p></body>',
      '<body><p>x</p>[B]<select><b hidden></select><p>y</p></body>',
    ],
    [
      'before </body> after a select of options',
      '<body><select><option>a</option><optgroup><option>b</select></body>',
      '<body><select><option>a</option><optgroup><option>b</select>[B]</body>',
    ],
    ['before a frameset', '<head></head><frameset></frameset>', '<head></head>[B]<frameset></frameset>'],
    [
      'inside a declarative shadow root',
      '<body><template shadowrootmode=open><p>x</p></template></body>',
      '<body><template shadowrootmode=open><p>x</p>[B]</template></body>',
    ],
  ])('places the badge %s', (_name, html, expected) => {
    expect(marked(inject(html))).toBe(expected);
  });

  it.each([
    ['with a shadow root of its own for a page whose body is no shadow host', '<body><p>x</p></body>', 'shadow'],
    ['with a shadow root of its own when other elements have one', '<body><my-card><template shadowrootmode=open>c</template></my-card></body>', 'shadow'],
    ['with a shadow root of its own when a deeper element has a slot name', '<body><my-card><b slot=x>c</b></my-card></body>', 'shadow'],
    ['bare, inside the shadow root body has already', '<body><template shadowrootmode=closed><p>x</p></template></body>', 'bare'],
    ['bare, beside a child of body with a slot name (it would not render in our shadow root)', '<body><p slot=x>x</p></body>', 'bare'],
    ['bare, before a later shadow root of the page it would turn off', '<body><select><b></select><template shadowrootmode=open>t</template></body>', 'bare'],
  ])('places the badge %s', (_name, html, kind) => {
    const out = inject(html);
    expect(out.includes(MARKUP.shadow) ? 'shadow' : out.includes(MARKUP.bare) ? 'bare' : 'none').toBe(kind);
    expect(badgeRendered(out, true)).toBe(true);
  });
});

/**
 * Random tag soup from the fragments hostile pages are made of. FC_SEED replays a failure;
 * fast-check prints the seed and the shrunk page.
 */
const seed = Number(process.env.FC_SEED ?? 20261125);
const runs = Number(process.env.FC_RUNS ?? 400);
const FRAGMENTS = [
  '<!--',
  '-->',
  '<!-- </body> -->',
  '</body>',
  '</BODY >',
  '</html>',
  '<body>',
  '<html>',
  '<head>',
  '</head>',
  '<!DOCTYPE html>',
  '<textarea>',
  '</textarea>',
  '<script>',
  '</script>',
  '<!--<script>',
  '<style>',
  '</style>',
  '<title>',
  '</title>',
  '<xmp>',
  '<iframe>',
  '<noscript>',
  '</noscript>',
  '<noembed>',
  '<noframes>',
  '<plaintext>',
  '<template>',
  '</template>',
  '<template shadowrootmode="open">',
  '<select>',
  '<option>',
  '</select>',
  '<details>',
  '<dialog>',
  '<div hidden>',
  '<div>',
  '</div>',
  '<p>',
  '</p>',
  '<b style="display:none">',
  '</b>',
  '<a href=x>',
  '</a>',
  '<i>',
  '<font color=red>',
  '<nobr>',
  '<svg>',
  '</svg>',
  '<foreignObject>',
  '<desc>',
  '<math>',
  '<mi>',
  '<annotation-xml encoding="text/html">',
  '<![CDATA[',
  ']]>',
  '<table>',
  '<tr>',
  '<td>',
  '</table>',
  '<caption>',
  '<colgroup>',
  '<object>',
  '<video>',
  '<canvas>',
  '<frameset>',
  '<frame>',
  '<ul><li>',
  '<form>',
  '<button>',
  '<marquee>',
  '<listing>',
  '<pre>',
  '<image>',
  '<input type=hidden>',
  '<h1>',
  '<dd>',
  '<ruby><rt>',
  '<di\0v hidden>',
  '\0',
  'text',
  ' ',
  '\n',
  '<',
  '</',
  '<!',
  '<div a="',
  '"',
  "'",
  '>',
  '&amp;',
  '&',
  'é日本',
];
const soup = fc.tuple(fc.boolean(), fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 24 })).map(([bom, parts]) => (bom ? '\ufeff' : '') + parts.join(''));

describe('injectBadge on random tag soup', () => {
  it(`keeps the badge a direct, intact child of body (seed ${seed})`, () => {
    fc.assert(
      fc.property(soup, (html) => {
        const page = Buffer.from(html, 'utf8');
        const out = injectBadge(page, OPTIONS);
        const text = decodeServed(out);
        expect(badgeRendered(text, true), text).toBe(true);
        insertedPart(page, out);
      }),
      { seed, numRuns: runs },
    );
  });

  it(`never throws on arbitrary bytes, and always inserts the badge (seed ${seed})`, () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2048 }),
      fc
        .tuple(fc.constantFrom([0xff, 0xfe], [0xfe, 0xff], [0xef, 0xbb, 0xbf]), fc.uint8Array({ maxLength: 512 }))
        .map(([bom, rest]) => Uint8Array.from([...bom, ...rest])),
    );
    fc.assert(
      fc.property(bytes, (raw) => {
        const out = injectBadge(Buffer.from(raw), OPTIONS);
        expect(badgeStarts(decodeServed(out)).length).toBeGreaterThan(0);
      }),
      { seed, numRuns: runs },
    );
  });
});

describe('the corner a page asks for', () => {
  it.each([
    ['no meta', '<head></head><body></body>', 'bottom-left'],
    ['top-right', '<head><meta name="plinth-badge" content="top-right"></head><body></body>', 'top-right'],
    ['content first, single quotes, any case', "<HEAD><META CONTENT='Bottom-Right' NAME='Plinth-Badge'></HEAD>", 'bottom-right'],
    ['unquoted', '<meta name=plinth-badge content=top-left>', 'top-left'],
    ['an unknown corner', '<meta name="plinth-badge" content="center;left:-999px">', 'bottom-left'],
    ['another meta', '<meta name="viewport" content="top-right">', 'bottom-left'],
    ['the first of two', '<meta name="plinth-badge" content="top-left"><meta name="plinth-badge" content="top-right">', 'top-left'],
  ])('%s', (_name, html, corner) => {
    expect(badgeCorner(html)).toBe(corner);
  });

  it('puts the pill there', () => {
    const out = injectBadge(Buffer.from('<head><meta name="plinth-badge" content="top-right"></head><body></body>'), {
      siteName: 'my-site',
      reportUrl: 'https://plinth.example/report/my-site',
    }).toString();
    expect(out).toContain('right:12px !important;top:12px !important');
  });
});
