// The link check's page reader (src/ingest/link-refs.ts) skips what cannot hold a reference; here
// it is held to a reader built on parse5's full tokenizer, on pages made to find where the two
// could part: comments, scripts with their escapes, raw text, odd attributes, references. Which
// attributes hold an address is one table, the reader's own: what is compared is how a page is read.
import { Tokenizer, TokenizerMode, type TokenHandler, type Token } from 'parse5';
import { describe, expect, it } from 'vitest';
import { cssRefs, LINK_RELS_SKIPPED, pageRefs, SRCSET_ELEMENTS, srcsetUrls, URL_ATTRIBUTES, type LinkRef, type PageRefs } from '../../src/ingest/link-refs.js';

const RAWTEXT = new Set(['style', 'xmp', 'iframe', 'noembed', 'noframes']);
const RCDATA = new Set(['textarea', 'title']);

/** Every token through parse5, switched into raw text as a tree builder would. */
class TokenizerReader implements TokenHandler {
  readonly refs: LinkRef[] = [];
  base?: string;
  tokenizer!: Tokenizer;
  private style?: { text: string; line: number };

  onStartTag(token: Token.TagToken): void {
    const name = token.tagName;
    const attrs = token.attrs;
    const lineOf = (attr: string): number => token.location?.attrs?.[attr]?.startLine ?? token.location?.startLine ?? 1;
    const names = URL_ATTRIBUTES[name];
    if (names !== undefined) {
      const rel = name === 'link' ? attrs.find((a) => a.name === 'rel')?.value : undefined;
      if (!(rel !== undefined && LINK_RELS_SKIPPED.test(rel))) {
        for (const attr of attrs) if (names.includes(attr.name)) this.refs.push({ ref: attr.value, line: lineOf(attr.name) });
      }
    }
    if (SRCSET_ELEMENTS.has(name)) {
      for (const attr of attrs) if (attr.name === 'srcset') for (const url of srcsetUrls(attr.value)) this.refs.push({ ref: url, line: lineOf('srcset') });
    }
    if (name === 'base' && this.base === undefined) {
      const href = attrs.find((a) => a.name === 'href');
      if (href !== undefined) this.base = href.value.trim();
    }
    for (const attr of attrs) {
      if (attr.name === 'style' && attr.value.includes('url(')) for (const ref of cssRefs(attr.value, lineOf('style'))) this.refs.push(ref);
    }
    if (token.selfClosing) return;
    if (name === 'script') this.tokenizer.state = TokenizerMode.SCRIPT_DATA;
    else if (name === 'plaintext') this.tokenizer.state = TokenizerMode.PLAINTEXT;
    else if (RCDATA.has(name)) this.tokenizer.state = TokenizerMode.RCDATA;
    else if (RAWTEXT.has(name)) this.tokenizer.state = TokenizerMode.RAWTEXT;
    if (name === 'style') this.style = { text: '', line: token.location?.endLine ?? 1 };
  }
  onEndTag(token: Token.TagToken): void {
    if (token.tagName === 'style' && this.style !== undefined) {
      for (const ref of cssRefs(this.style.text, this.style.line)) this.refs.push(ref);
      this.style = undefined;
    }
  }
  onCharacter(token: Token.CharacterToken): void {
    if (this.style !== undefined) this.style.text += token.chars;
  }
  onWhitespaceCharacter(token: Token.CharacterToken): void {
    if (this.style !== undefined) this.style.text += token.chars;
  }
  onNullCharacter(): void {}
  onComment(): void {}
  onDoctype(): void {}
  onEof(): void {
    if (this.style !== undefined) for (const ref of cssRefs(this.style.text, this.style.line)) this.refs.push(ref);
    this.style = undefined;
  }
}

function tokenizerRefs(html: string): PageRefs {
  const reader = new TokenizerReader();
  const tokenizer = new Tokenizer({ sourceCodeLocationInfo: true }, reader);
  reader.tokenizer = tokenizer;
  tokenizer.write(html, true);
  return { refs: reader.refs, ...(reader.base !== undefined ? { base: reader.base } : {}) };
}

describe('the page reader against parse5', () => {
  it.each([
    ['plain links', '<a href="a.html">a</a>\n<img src=b.png alt=x>\n<link rel=stylesheet href=\'c.css\'>'],
    ['upper case', '<A HREF="a.html">a</A><IMG SRC=b.png><SCRIPT>x="<img src=no.png>"</SCRIPT><img src=yes.png>'],
    ['duplicate attributes keep the first', '<a href="first.html" HREF="second.html">'],
    ['a comment', '<!-- <a href="no.html"> -->\n<a href="yes.html">'],
    ['odd comment ends', '<!--><a href=1><!---><a href=2><!-- --!><a href=3><!-- -- ><a href=no>--><a href=4>'],
    ['bogus comments and a doctype', '<!DOCTYPE html PUBLIC "x>y"><a href=1><? <a href=no> ?><a href=2><![CDATA[ <a href=3> ]]></ x <a href=no>><a href=4>'],
    ['end tags with attributes', '</div title="<a href=no>"><a href=1></a href=no><a href=2>'],
    ['a script', '<script src="s.js">document.write("<a href=no>")</script><a href="yes">'],
    ['a script end tag with attributes', '<script>x</script foo="<a href=no>"><a href=1>'],
    ['an escaped script', '<script><!-- <script> </script> <a href=no> --></script><a href=1>'],
    ['a script escape left by -->', '<script><!-- x --> </script><a href=1>'],
    ['a script ended inside an escape', '<script><!-- x </script><a href=1>'],
    ['a double escape ended by -->', '<script><!--<script>--></script><a href=1>'],
    ['script-like names', '<script><!--<scripts></script><a href=1>'],
    ['an unterminated script', '<script><a href=no>'],
    ['style text', '<style>\n\n a { background: url(x.png) }\n</style ><a href=1><style>b{c:url(y.png)}'],
    ['textarea and title', '<title><a href=no></title><textarea></textareax><a href=no></textarea><a href=1>'],
    [
      'raw text elements',
      '<xmp><a href=no></xmp><iframe src=f.html><a href=no></iframe><noembed><a href=no></noembed><noframes><a href=no></noframes><a href=1>',
    ],
    ['self-closing raw text', '<script/><a href=1></script><style/><a href=2>'],
    ['plaintext', '<a href=1><plaintext><a href=no>'],
    ['references in values', '<a href="a?x=1&amp;y=2&copy=3&copy;&#x41;&#65&notit;">'],
    ['references unquoted', '<a href=a&amp;b&lt>'],
    ['NUL characters', '<a href="a\0b"><style>a{b:url(c\0d)}</style>'],
    ['line breaks', '<a\r\nhref="a.html"\r\n>\r<img\rsrc=b.png>\n\n<img\n\n src="c.png">'],
    ['srcset and poster', '<img srcset="a.png 1x,\n b.png 2x"><video poster=p.jpg src=v.mp4><source srcset=s.webp>'],
    ['style attributes', '<div style="background:url(a.png)" STYLE="url(no.png)"><p style=\'x:url("b.png")\'>'],
    ['a base', '<base target=x><base href=" /docs/ "><base href=no>'],
    ['preconnect', '<link rel="dns-prefetch preconnect" href="//x"><link REL=preconnect href=y><link href=z rel=icon>'],
    ['self-closing and slashes', '<a/href=1><a / href=2 /><img src=3/><a href=4//>'],
    ['equals first', '<a =x href=1><a href==2>'],
    ['quotes in names and values', '<a "x" href=1><a href=a"b\'c><a href=\'q"\'href=2>'],
    ['missing values', '<a href><a href=><a href= >'],
    ['tags cut off', '<a href="never'],
    ['a tag cut off in its name', '<img'],
    ['a lone less-than', 'a < b <3 <a href=1> <'],
    [
      'style= on other elements',
      '<p class="x" style="a:url(1.png)"><DIV TITLE=\'>\' STYLE=url(2.png)><b/style=\'x:url(3.png)\'><i stylex=url(no.png) =style=url(no.png)><span style>',
    ],
    ['quotes and > in other elements', '<p title="a>b" data-x=\'"<a href=no>\'><td a"b=c\'d style="url(1.png)"><tr x="unended>'],
    [
      'names that start like known ones',
      '<ab href=no><imgs src=no><bases href=no><styles><a href=1><scripts><a href=2></styles><linkx href=no><aa href=no><A href=3>',
    ],
    ['a Kelvin sign is not a k', '<lin\u212A href=no.css><link href=1.css>'],
  ])('%s', (_name, html) => {
    expect(pageRefs(html)).toEqual(tokenizerRefs(html));
  });

  it('counts a line break after "&" once, where parse5 counts it twice', () => {
    const html = '<p>&\n<a href="x.html">';
    expect(tokenizerRefs(html).refs).toEqual([{ ref: 'x.html', line: 3 }]);
    expect(pageRefs(html).refs).toEqual([{ ref: 'x.html', line: 2 }]);
  });

  // Pages of fragments chosen at random (a fixed seed), thousands of them.
  const FRAGMENTS = [
    '<',
    '>',
    '</',
    '/',
    '=',
    '"',
    "'",
    ' ',
    '\n',
    '\r\n',
    '\r',
    '\t',
    '-',
    '!',
    '?',
    'x',
    '&amp;',
    '&',
    '&#',
    '\0',
    '<!--',
    '-->',
    '--!>',
    '<!-->',
    '<!',
    '<?',
    '<![CDATA[',
    ']]>',
    '<!DOCTYPE html>',
    '<a ',
    '<a href=',
    '<A HREF="',
    'href=',
    'src=',
    'HREF',
    'srcset=',
    'poster=',
    'style=',
    'rel=',
    'url(',
    ')',
    '<img ',
    '<img src="i.png">',
    '<link rel=preconnect ',
    '<link href=',
    '<video ',
    '<source ',
    '<base href=',
    '<base ',
    '<script>',
    '</script>',
    '<SCRIPT ',
    '</script ',
    '<script/>',
    '<style>',
    '</style>',
    '</STYLE ',
    '<title>',
    '</title>',
    '<textarea>',
    '</textarea>',
    '<xmp>',
    '</xmp>',
    '<plaintext>',
    '<div style="',
    'a.png 1x, b.png 2x',
    '@import "x.css";',
    'page.html',
    '/abs/path',
    '../up.png',
    '#frag',
    '?q=1',
    '<p ',
    '<div ',
    '<P class="',
    'class="x">',
    'style="background:url(s.png)"',
    'STYLE=url(t.png)',
    " sTyLe='url(u.png)'",
    '<b style=',
    '<span/style=',
    'style',
    '<ab href=x>',
    '<imgs src=y>',
    '<styles>',
    '<scripts>',
    '<linkx href=',
    '<aa ',
    '<i ',
    '<td',
    'é',
    '\u212A',
  ];
  it('gives the same references on 20,000 random pages', () => {
    let seed = 0x2545f491;
    const random = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    for (let i = 0; i < 20_000; i++) {
      let html = '';
      const count = 1 + random(40);
      for (let k = 0; k < count; k++) html += FRAGMENTS[random(FRAGMENTS.length)];
      // parse5 counts a line break right after "&" twice (see the case below); not compared.
      html = html.replace(/&(?=[\r\n])/g, '& ');
      const expected = tokenizerRefs(html);
      const actual = pageRefs(html);
      if (JSON.stringify(actual) !== JSON.stringify(expected))
        expect({ html: JSON.stringify(html), actual }).toEqual({ html: JSON.stringify(html), actual: expected });
    }
  });
});

/** The style sheet reader as it was: both patterns searched over the whole text, case-blind. */
function searchedCssRefs(css: string, firstLine = 1): LinkRef[] {
  const text = css.includes('/*') ? css.replace(/\/\*[\s\S]*?(?:\*\/|$)/g, (comment) => comment.replace(/[^\n]/g, ' ')) : css;
  const found: Array<{ index: number; ref: string }> = [];
  for (const match of text.matchAll(/url\(\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^()"'\s]*))\s*\)/gi))
    found.push({ index: match.index, ref: match[1] ?? match[2] ?? match[3] ?? '' });
  for (const match of text.matchAll(/@import\s+(?:"([^"\n]*)"|'([^'\n]*)')/gi)) found.push({ index: match.index, ref: match[1] ?? match[2] ?? '' });
  found.sort((a, b) => a.index - b.index);
  return found.map(({ index, ref }) => ({ ref, line: firstLine + (text.slice(0, index).match(/\n/g)?.length ?? 0) }));
}

describe('the style sheet reader against a search of the whole text', () => {
  it.each([
    ['url() in its forms', 'a{b:url(x.png)}\nc{d:URL( "y.png" )}\ne{f:Url(\'z.png\')}'],
    ['url() inside a quoted url()', 'a{b:url("url(x.png)")} c{d:url(y.png)}'],
    ['@import in its forms', '@import "a.css";\n@IMPORT \'b.css\' screen;\n@import url(c.css);'],
    ['@import inside an @import', '@import "@import \'no.css\'"; @import "yes.css";'],
    ['nested calls', 'a{b:url(url(url(x.png)))} c{d:calc(1px + (2px))}'],
    ['comments', '/* url(no.png) */a{b:url(/* no */yes.png)}\n/* @import "no.css";\n */@import "z.css";/* unended url(x)'],
    ['at the very start and end', 'url(a)@import "b"url('],
    ['an @ and a ( alone', '@ ( @media (min-width: 1px) { a{b:url(c.png)} } @'],
  ])('%s', (_name, css) => {
    expect(cssRefs(css, 3)).toEqual(searchedCssRefs(css, 3));
  });

  const FRAGMENTS = [
    'url(',
    'URL(',
    'uRl(',
    'ur',
    'l(',
    '(',
    ')',
    '@import',
    '@IMPORT',
    '@',
    ' ',
    '\n',
    '\t',
    '"',
    "'",
    'a.png',
    '/*',
    '*/',
    ';',
    '{',
    '}',
    'x',
  ];
  it('gives the same references on 20,000 random style sheets', () => {
    let seed = 0x1b873593;
    const random = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    for (let i = 0; i < 20_000; i++) {
      let css = '';
      const count = 1 + random(30);
      for (let k = 0; k < count; k++) css += FRAGMENTS[random(FRAGMENTS.length)];
      const actual = cssRefs(css);
      const expected = searchedCssRefs(css);
      if (JSON.stringify(actual) !== JSON.stringify(expected))
        expect({ css: JSON.stringify(css), actual }).toEqual({ css: JSON.stringify(css), actual: expected });
    }
  });
});
