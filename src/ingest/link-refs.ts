/**
 * The references a page or style sheet makes to other files: `href`, `src`, `srcset`, `poster`,
 * `<link>`, and CSS `url()` and `@import` (in style sheets, `<style>` and `style=`), each with
 * its line. A page is read by the tokenizing rules of the HTML standard, but only as far as they
 * decide where a tag, a comment or an element's raw text begins and ends: `<script>`, `<style>`
 * and the like switch to raw text as a browser's tree builder would, so markup inside a script
 * or a comment is never mistaken for a link. Only the attributes that can hold a reference are
 * kept, and text between tags is skipped with `indexOf`, not read character by character: a full
 * tokenizer spent most of a link-heavy deploy's analysis building tokens nobody looked at. Most
 * tags are of elements that can refer to nothing but through `style=` (`<p class="…">`): their
 * name is matched in place against the few that can, and their attributes are passed over to
 * the tag's `>`, slicing nothing, unless one is named `style`.
 * test/ingest/link-refs-parity.test.ts holds this reader to parse5's tokenizer.
 */
import { Tokenizer, type TokenHandler, type Token } from 'parse5';

export interface LinkRef {
  ref: string;
  line: number;
}

/** What a page refers to, and the `<base href>` it declares, if any. */
export interface PageRefs {
  refs: LinkRef[];
  base?: string;
}

/** Attributes that hold one address, by element (test/ingest/link-refs-parity.test.ts reads them too). */
export const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href'],
  area: ['href'],
  link: ['href'],
  img: ['src'],
  script: ['src'],
  iframe: ['src'],
  embed: ['src'],
  source: ['src'],
  track: ['src'],
  audio: ['src'],
  video: ['src', 'poster'],
  input: ['src'],
};
/** Elements whose `srcset` lists addresses. */
export const SRCSET_ELEMENTS: ReadonlySet<string> = new Set(['img', 'source']);
// The attributes a reference may come from, by element: `style=` on any.
const STYLE_ONLY: readonly string[] = ['style'];
const WANTED_ATTRIBUTES = new Map<string, readonly string[]>(
  ['base', 'link', ...Object.keys(URL_ATTRIBUTES)].map((name) => [
    name,
    [
      ...STYLE_ONLY,
      ...(URL_ATTRIBUTES[name] ?? []),
      ...(SRCSET_ELEMENTS.has(name) ? ['srcset'] : []),
      ...(name === 'link' ? ['rel'] : []),
      ...(name === 'base' ? ['href'] : []),
    ],
  ]),
);
/** Link relations that name another origin, not a file of the site. */
export const LINK_RELS_SKIPPED = /\b(preconnect|dns-prefetch)\b/i;

// Elements whose content is text up to their own end tag (RAWTEXT, RCDATA and script data alike
// for finding that end; only `<script>` has escapes that can hide it).
const RAW_TEXT = new Set(['style', 'xmp', 'iframe', 'noembed', 'noframes', 'textarea', 'title', 'script']);

/** An element whose tags need more than finding their end. */
interface KnownElement {
  name: string;
  urlNames?: readonly string[];
  wanted: readonly string[];
  rawText: boolean;
}
// By the name's first letter, lower case (0 for `a`): a tag's name is matched in place, without
// slicing or lowering it, and most names (`p`, `div`, `span`…) are told apart by their length.
const KNOWN_BY_LETTER: KnownElement[][] = Array.from({ length: 26 }, () => []);
for (const name of new Set([...WANTED_ATTRIBUTES.keys(), ...RAW_TEXT, 'plaintext'])) {
  const urlNames = URL_ATTRIBUTES[name];
  const element = { name, ...(urlNames !== undefined ? { urlNames } : {}), wanted: WANTED_ATTRIBUTES.get(name) ?? STYLE_ONLY, rawText: RAW_TEXT.has(name) };
  KNOWN_BY_LETTER[name.charCodeAt(0) - 97]!.push(element);
}
const END_OF_RAW_TEXT = new Map([...RAW_TEXT].map((name) => [name, new RegExp(`</${name}[\\t\\n\\f />]`, 'gi')]));
// In a script, `<!--` starts an escape within which `<script>` nests; otherwise its end tag ends it.
const SCRIPT_ESCAPE_OR_END = /<!--|<\/script[\t\n\f />]/gi;
const COMMENT_END = /--!?>/g;

const TAB = 9;
const LF = 10;
const FF = 12;
const SPACE = 32;
const BANG = 33;
const DOUBLE_QUOTE = 34;
const APOSTROPHE = 39;
const DASH = 45;
const SLASH = 47;
const LESS_THAN = 60;
const EQUALS = 61;
const GREATER_THAN = 62;
const QUESTION_MARK = 63;

// Line breaks are normalised to LF before reading, so CR is not whitespace here.
const isSpaceCode = (c: number): boolean => c === SPACE || c === LF || c === TAB || c === FF;
const isAlphaCode = (c: number): boolean => (c | 0x20) >= 97 && (c | 0x20) <= 122;

/** An attribute the reader kept: its name, its value as the tokenizer would give it, the line it starts on. */
interface KeptAttribute {
  name: string;
  value: string;
  line: number;
}

const UNKNOWN = -2;

/** The element named by `html` at `[start, end)` (its first character a letter), if its tags need more than finding their end. */
function knownElement(html: string, start: number, end: number): KnownElement | undefined {
  const length = end - start;
  // The tokenizer lowers ASCII upper case only: `c | 0x20` is a lower-case letter for that letter in either case alone.
  next: for (const element of KNOWN_BY_LETTER[(html.charCodeAt(start) | 0x20) - 97]!) {
    const name = element.name;
    if (name.length !== length) continue;
    for (let i = 1; i < length; i++) if ((html.charCodeAt(start + i) | 0x20) !== name.charCodeAt(i)) continue next;
    return element;
  }
  return undefined;
}

/** Whether `text` holds the lowercase ASCII `word` at `start`, in any case (ASCII letters only). */
function hasWordCaseless(text: string, start: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    if ((text.charCodeAt(start + i) | 0x20) !== word.charCodeAt(i)) return false;
  }
  return true;
}

class PageReader {
  readonly refs: LinkRef[] = [];
  base?: string;
  private lineOffset = 0;
  private line = 1;
  private nextBreak = UNKNOWN;
  // The tag last read: its attributes of interest (reused from tag to tag), whether it closed itself.
  private readonly attrs: KeptAttribute[] = [];
  private selfClosing = false;

  constructor(private readonly html: string) {}

  read(): void {
    const html = this.html;
    const length = html.length;
    let at = 0;
    while (at < length) {
      const open = html.indexOf('<', at);
      if (open === -1 || open + 1 >= length) return;
      const next = html.charCodeAt(open + 1);
      if (isAlphaCode(next)) {
        at = this.startTag(open);
      } else if (next === SLASH) {
        const after = open + 2 < length ? html.charCodeAt(open + 2) : -1;
        if (isAlphaCode(after)) at = this.endTag(open + 3);
        else if (after === GREATER_THAN) at = open + 3;
        else if (after === -1) return;
        else at = this.bogusComment(open + 2);
      } else if (next === BANG) {
        at = html.startsWith('--', open + 2) ? this.comment(open + 4) : this.bogusComment(open + 2);
      } else if (next === QUESTION_MARK) {
        at = this.bogusComment(open + 1);
      } else {
        at = open + 1;
      }
    }
  }

  /** A start tag at `open`: its references, then past its raw text if it has any. */
  private startTag(open: number): number {
    const html = this.html;
    const length = html.length;
    let nameEnd = open + 2;
    for (; nameEnd < length; nameEnd++) {
      const c = html.charCodeAt(nameEnd);
      if (c === GREATER_THAN || c === SLASH || isSpaceCode(c)) break;
    }
    const known = knownElement(html, open + 1, nameEnd);
    // Most tags are of other elements, where only a `style=` can refer to something.
    if (known === undefined) return this.otherTag(nameEnd);
    const name = known.name;
    const end = this.readTag(nameEnd, known.wanted);
    if (end === -1) return length;
    const attrs = this.attrs;
    if (attrs.length > 0) this.tagRefs(name, known.urlNames, attrs);
    // What the tree builder would do: these elements' content is text, not markup.
    if (this.selfClosing) return end;
    if (name === 'plaintext') return length;
    if (!known.rawText) return end;
    const close = name === 'script' ? this.endOfScript(end) : this.endOfRawText(name, end);
    if (name === 'style') {
      const text = html.slice(end, close);
      const refs = cssRefs(text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text, this.lineAt(end - 1));
      for (const ref of refs) this.refs.push(ref);
    }
    if (close >= length) return length;
    // The end tag, `</name`, and whatever attributes it has up to its `>`.
    return this.endTag(close + 2 + name.length);
  }

  /**
   * The rest of a start tag of an element that is not known, from just past its name: past its
   * `>` by the same attribute states as `readTag`, keeping nothing and slicing nothing, unless
   * one of its attributes is named `style`, when `readTag` reads it again to keep that.
   */
  private otherTag(from: number): number {
    const html = this.html;
    const length = html.length;
    let at = from;
    for (;;) {
      // Between attributes: a `/` not followed by `>` is passed over like a space.
      let c = 0;
      for (;;) {
        if (at >= length) return length;
        c = html.charCodeAt(at);
        if (c === GREATER_THAN) return at + 1;
        if (!(c === SLASH || isSpaceCode(c))) break;
        at++;
      }
      // A name: its first character whatever it is (`=` too), then up to a space, `/`, `>` or `=`.
      const nameStart = at++;
      for (; at < length; at++) {
        c = html.charCodeAt(at);
        if (c === GREATER_THAN || c === SLASH || c === EQUALS || isSpaceCode(c)) break;
      }
      if (at - nameStart === 5 && hasWordCaseless(html, nameStart, 'style')) return this.styledTag(from);
      while (at < length && isSpaceCode(html.charCodeAt(at))) at++;
      if (at >= length) return length;
      if (html.charCodeAt(at) !== EQUALS) continue;
      at++;
      while (at < length && isSpaceCode(html.charCodeAt(at))) at++;
      if (at >= length) return length;
      c = html.charCodeAt(at);
      if (c === DOUBLE_QUOTE || c === APOSTROPHE) {
        const close = html.indexOf(c === DOUBLE_QUOTE ? '"' : "'", at + 1);
        if (close === -1) return length;
        at = close + 1;
      } else {
        // Unquoted, up to a space or `>` (a `>` right after `=` ends the tag at the top).
        for (; at < length; at++) {
          c = html.charCodeAt(at);
          if (c === GREATER_THAN || isSpaceCode(c)) break;
        }
      }
    }
  }

  /** A start tag of an element that is not known, with a `style` attribute, from just past its name. */
  private styledTag(from: number): number {
    const end = this.readTag(from, STYLE_ONLY);
    if (end === -1) return this.html.length;
    if (this.attrs.length > 0) this.tagRefs('', undefined, this.attrs);
    return end;
  }

  /** The references of a start tag's kept attributes, in the order a tokenizer's reader finds them. */
  private tagRefs(name: string, urlNames: readonly string[] | undefined, attrs: readonly KeptAttribute[]): void {
    if (urlNames !== undefined) {
      const rel = name === 'link' ? attrs.find((a) => a.name === 'rel')?.value : undefined;
      if (!(rel !== undefined && LINK_RELS_SKIPPED.test(rel))) {
        for (const attr of attrs) if (urlNames.includes(attr.name)) this.refs.push({ ref: detached(attr.value), line: attr.line });
      }
    }
    if (SRCSET_ELEMENTS.has(name)) {
      for (const attr of attrs) if (attr.name === 'srcset') for (const url of srcsetUrls(attr.value)) this.refs.push({ ref: detached(url), line: attr.line });
    }
    if (name === 'base' && this.base === undefined) {
      const href = attrs.find((a) => a.name === 'href');
      if (href !== undefined) this.base = detached(href.value.trim());
    }
    for (const attr of attrs) {
      if (attr.name === 'style' && attr.value.includes('url(')) for (const ref of cssRefs(attr.value, attr.line)) this.refs.push(ref);
    }
  }

  /** An end tag from `from`, inside its name: past its `>` (its attributes are read, not kept). */
  private endTag(from: number): number {
    const html = this.html;
    let at = from;
    for (; at < html.length; at++) {
      const c = html.charCodeAt(at);
      if (isSpaceCode(c) || c === SLASH || c === GREATER_THAN) break;
    }
    // Nearly every end tag ends with its name.
    if (at < html.length && html.charCodeAt(at) === GREATER_THAN) return at + 1;
    const end = this.readTag(at, undefined);
    return end === -1 ? html.length : end;
  }

  /**
   * A tag's attributes from `from` (just past its name) to its `>`, by the standard's attribute
   * states; keeps the first of each name in `wanted` in `attrs`. The offset past the `>`, or -1
   * when the page ends inside the tag, which a browser then drops.
   */
  private readTag(from: number, wanted: readonly string[] | undefined): number {
    const html = this.html;
    const length = html.length;
    const attrs = this.attrs;
    // Setting an array's length is a runtime call: only when there is something to drop.
    if (attrs.length > 0) attrs.length = 0;
    this.selfClosing = false;
    let at = from;
    for (;;) {
      while (at < length && isSpaceCode(html.charCodeAt(at))) at++;
      if (at >= length) return -1;
      let c = html.charCodeAt(at);
      if (c === GREATER_THAN) return at + 1;
      if (c === SLASH) {
        at++;
        if (at >= length) return -1;
        if (html.charCodeAt(at) === GREATER_THAN) {
          this.selfClosing = true;
          return at + 1;
        }
        continue;
      }
      const nameStart = at;
      if (c === EQUALS) at++;
      for (; at < length; at++) {
        c = html.charCodeAt(at);
        if (isSpaceCode(c) || c === SLASH || c === GREATER_THAN || c === EQUALS) break;
      }
      const nameEnd = at;
      while (at < length && isSpaceCode(html.charCodeAt(at))) at++;
      if (at >= length) return -1;
      let quote = '';
      let valueStart = -1;
      let valueEnd = -1;
      if (html.charCodeAt(at) === EQUALS) {
        at++;
        while (at < length && isSpaceCode(html.charCodeAt(at))) at++;
        if (at >= length) return -1;
        c = html.charCodeAt(at);
        if (c === DOUBLE_QUOTE || c === APOSTROPHE) {
          quote = c === DOUBLE_QUOTE ? '"' : "'";
          const close = html.indexOf(quote, at + 1);
          if (close === -1) return -1;
          valueStart = at + 1;
          valueEnd = close;
          at = close + 1;
        } else if (c !== GREATER_THAN) {
          valueStart = at;
          for (; at < length; at++) {
            c = html.charCodeAt(at);
            if (isSpaceCode(c) || c === GREATER_THAN) break;
          }
          if (at >= length) return -1;
          valueEnd = at;
        }
      }
      if (wanted === undefined) continue;
      const name = this.wantedName(nameStart, nameEnd, wanted);
      if (name === undefined || attrs.some((attr) => attr.name === name)) continue;
      let value = valueStart === -1 ? '' : html.slice(valueStart, valueEnd);
      if (value.includes('&') || value.includes('\0')) value = decodeAttributeValue(value, quote);
      attrs.push({ name, value, line: this.lineAt(nameStart) });
    }
  }

  /** The name at `[start, end)`, lowercased, when it is one of `wanted`. */
  private wantedName(start: number, end: number, wanted: readonly string[]): string | undefined {
    const html = this.html;
    next: for (const name of wanted) {
      if (name.length !== end - start) continue;
      for (let i = 0; i < name.length; i++) {
        const c = html.charCodeAt(start + i);
        // ASCII upper case is lowered; nothing else matches a lower-case name.
        if ((c >= 65 && c <= 90 ? c | 0x20 : c) !== name.charCodeAt(i)) continue next;
      }
      return name;
    }
    return undefined;
  }

  /** Where the raw text of `name` from `from` ends: the `<` of its end tag, or the page's end. */
  private endOfRawText(name: string, from: number): number {
    const end = END_OF_RAW_TEXT.get(name)!;
    end.lastIndex = from;
    const found = end.exec(this.html);
    return found === null ? this.html.length : found.index;
  }

  /** The `<` of a script's end tag from `from`, past `<!--` escapes and the `<script>` they may nest. */
  private endOfScript(from: number): number {
    const html = this.html;
    let at = from;
    for (;;) {
      SCRIPT_ESCAPE_OR_END.lastIndex = at;
      const found = SCRIPT_ESCAPE_OR_END.exec(html);
      if (found === null) return html.length;
      if (found[0] !== '<!--') return found.index;
      const escaped = this.escapedScript(found.index + 4);
      if (escaped.end) return escaped.at;
      at = escaped.at;
    }
  }

  /**
   * The script data escaped states, from just past `<!--`: either the script's end tag (`end`,
   * at its `<`), or the `-->` that leaves the escape (`at` just past it). Inside, `<script>`
   * starts a double escape in which `</script>` only ends that nesting.
   */
  private escapedScript(from: number): { end: boolean; at: number } {
    const html = this.html;
    const length = html.length;
    let double = false;
    let dashes = 2;
    let at = from;
    while (at < length) {
      const c = html.charCodeAt(at);
      if (c === DASH) {
        dashes++;
        at++;
        continue;
      }
      if (c === GREATER_THAN && dashes >= 2) return { end: false, at: at + 1 };
      dashes = 0;
      if (c !== LESS_THAN) {
        at++;
        continue;
      }
      at++;
      const slash = at < length && html.charCodeAt(at) === SLASH;
      if (slash) at++;
      if (!slash && double) continue;
      const nameStart = at;
      while (at < length && isAlphaCode(html.charCodeAt(at))) at++;
      if (at === nameStart || at >= length) continue;
      const c2 = html.charCodeAt(at);
      if (!(isSpaceCode(c2) || c2 === SLASH || c2 === GREATER_THAN)) continue;
      const isScript = at - nameStart === 6 && html.slice(nameStart, at).toLowerCase() === 'script';
      // `</script` ends the script from an escape, or ends a double escape.
      if (slash && !double && isScript) return { end: true, at: nameStart - 2 };
      if (isScript) double = !double;
      // The character after the name is taken with it (a `>` here never ends the escape).
      at++;
    }
    return { end: true, at: length };
  }

  /** A comment from just past `<!--`, to past its `-->` (or `--!>`, `<!-->`, `<!--->`). */
  private comment(from: number): number {
    const html = this.html;
    if (html.charCodeAt(from) === GREATER_THAN) return from + 1;
    if (html.startsWith('->', from)) return from + 2;
    COMMENT_END.lastIndex = from;
    const found = COMMENT_END.exec(html);
    return found === null ? html.length : found.index + found[0].length;
  }

  /** `<?…>`, `<!…>` (a doctype too) and `</ …>` run to the next `>`. */
  private bogusComment(from: number): number {
    const end = this.html.indexOf('>', from);
    return end === -1 ? this.html.length : end + 1;
  }

  /** The line of `offset`; asked in increasing order, so the page's line breaks are counted once. */
  private lineAt(offset: number): number {
    if (offset <= this.lineOffset) return this.line;
    // The first line break at or past `lineOffset`, kept: a page of one long line is searched once.
    let at = this.nextBreak === UNKNOWN ? this.html.indexOf('\n', this.lineOffset) : this.nextBreak;
    for (; at !== -1 && at < offset; at = this.html.indexOf('\n', at + 1)) this.line++;
    this.nextBreak = at;
    this.lineOffset = offset;
    return this.line;
  }
}

/**
 * An attribute value with character references (or NUL) as the tokenizer gives it: the value is
 * rare enough that parse5 reads it, in a tag of its own with the same quotes, and the standard's
 * rules for references in attributes (`&copy=` stays as written) come out exactly. The value holds
 * no quote of its own kind (unquoted: no space or `>`), so the tag ends where it is written to.
 */
function decodeAttributeValue(raw: string, quote: string): string {
  const handler = new SingleTagHandler();
  new Tokenizer({ sourceCodeLocationInfo: false }, handler).write(`<a x=${quote}${raw}${quote}>`, true);
  return handler.value ?? raw;
}

class SingleTagHandler implements TokenHandler {
  value?: string;
  onStartTag(token: Token.TagToken): void {
    this.value ??= token.attrs[0]?.value;
  }
  onEndTag(): void {}
  onCharacter(): void {}
  onWhitespaceCharacter(): void {}
  onNullCharacter(): void {}
  onComment(): void {}
  onDoctype(): void {}
  onEof(): void {}
}

/**
 * `value` as a string of its own. V8 cuts a slice of 13 characters or more out of a string as a
 * view that keeps the whole string alive, and references outlive their page (the link check
 * keeps them by content, `refsOf` in site-analysis.ts): a 16-character link would hold a 50 KB
 * page in memory. Prefixing makes V8 copy the value into a new string, and the slice is of that.
 */
function detached(value: string): string {
  return value.length < 13 ? value : (' ' + value).slice(1);
}

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';

/** The URLs of a `srcset`, read as the HTML standard does: a URL, then descriptors up to a comma. */
export function srcsetUrls(value: string): string[] {
  const urls: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && (isSpace(value[i]!) || value[i] === ',')) i++;
    const start = i;
    while (i < value.length && !isSpace(value[i]!)) i++;
    let url = value.slice(start, i);
    if (url.endsWith(',')) url = url.replace(/,+$/, '');
    else {
      let depth = 0;
      for (; i < value.length; i++) {
        const c = value[i];
        if (c === '(') depth++;
        else if (c === ')') depth--;
        else if (c === ',' && depth <= 0) break;
      }
    }
    if (url !== '') urls.push(url);
  }
  return urls;
}

export function pageRefs(html: string): PageRefs {
  // The tokenizer reads CR LF and a lone CR as one LF, for lines and values alike.
  const reader = new PageReader(html.includes('\r') ? html.replace(/\r\n?/g, '\n') : html);
  reader.read();
  return { refs: reader.refs, ...(reader.base !== undefined ? { base: reader.base } : {}) };
}

// No nested quantifiers: each pattern scans the text once, whatever it holds.
const CSS_COMMENT = /\/\*[\s\S]*?(?:\*\/|$)/g;
// An unquoted url() stops at the next "(" too, so "url(url(url(…" costs one pass, not one per "url(".
// Both are tried only where their first character is (sticky): a style sheet has few "(" and
// fewer "@", which `indexOf` finds many times faster than a case-blind pattern searches.
const CSS_URL = /url\(\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^()"'\s]*))\s*\)/iy;
const CSS_IMPORT = /@import\s+(?:"([^"\n]*)"|'([^'\n]*)')/iy;

/** `url()` and `@import "…"` of a style sheet; `firstLine` is the line the text starts on. */
export function cssRefs(css: string, firstLine = 1): LinkRef[] {
  // Comments are blanked, keeping their line breaks so lines still count right.
  const text = css.includes('/*') ? css.replace(CSS_COMMENT, (comment) => comment.replace(/[^\n]/g, ' ')) : css;
  const found: Array<{ index: number; ref: string }> = [];
  // Where a search of the whole text would find them: each match from where the last one ended.
  let urlsFrom = 0;
  for (let paren = text.indexOf('('); paren !== -1; paren = text.indexOf('(', paren + 1)) {
    const start = paren - 3;
    if (start < urlsFrom || !hasWordCaseless(text, start, 'url')) continue;
    CSS_URL.lastIndex = start;
    const match = CSS_URL.exec(text);
    if (match === null) continue;
    found.push({ index: start, ref: detached(match[1] ?? match[2] ?? match[3] ?? '') });
    urlsFrom = CSS_URL.lastIndex;
  }
  let importsFrom = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    if (at < importsFrom) continue;
    CSS_IMPORT.lastIndex = at;
    const match = CSS_IMPORT.exec(text);
    if (match === null) continue;
    found.push({ index: at, ref: detached(match[1] ?? match[2] ?? '') });
    importsFrom = CSS_IMPORT.lastIndex;
  }
  if (found.length === 0) return [];
  found.sort((a, b) => a.index - b.index);
  const refs: LinkRef[] = [];
  let line = firstLine;
  let lineBreak = text.indexOf('\n');
  for (const { index, ref } of found) {
    for (; lineBreak !== -1 && lineBreak < index; lineBreak = text.indexOf('\n', lineBreak + 1)) line++;
    refs.push({ ref, line });
  }
  return refs;
}
