/**
 * The references a page or style sheet makes to other files: `href`, `src`, `srcset`, `poster`,
 * `<link>`, and CSS `url()` and `@import` (in style sheets, `<style>` and `style=`), each with
 * its line. HTML goes through parse5's tokenizer, switched into raw text for `<script>`,
 * `<style>` and the like as a browser's tree builder would, so markup inside a script or a
 * comment is never mistaken for a link.
 */
import { Tokenizer, TokenizerMode, type TokenHandler, Token } from 'parse5';

export interface LinkRef {
  ref: string;
  line: number;
}

/** What a page refers to, and the `<base href>` it declares, if any. */
export interface PageRefs {
  refs: LinkRef[];
  base?: string;
}

/** Attributes that hold one address, by element. */
const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
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
const SRCSET_ELEMENTS = new Set(['img', 'source']);
// Link relations that name another origin, not a file of the site.
const LINK_RELS_SKIPPED = /\b(preconnect|dns-prefetch)\b/i;

const RAWTEXT = new Set(['style', 'xmp', 'iframe', 'noembed', 'noframes']);
const RCDATA = new Set(['textarea', 'title']);

class RefCollector implements TokenHandler {
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
        for (const attr of attrs) if (names.includes(attr.name)) this.add(attr.value, lineOf(attr.name));
      }
    }
    if (SRCSET_ELEMENTS.has(name)) {
      for (const attr of attrs) if (attr.name === 'srcset') for (const url of srcsetUrls(attr.value)) this.add(url, lineOf('srcset'));
    }
    if (name === 'base' && this.base === undefined) {
      const href = attrs.find((a) => a.name === 'href');
      if (href !== undefined) this.base = href.value.trim();
    }
    for (const attr of attrs) {
      if (attr.name === 'style' && attr.value.includes('url(')) for (const ref of cssRefs(attr.value, lineOf('style'))) this.refs.push(ref);
    }
    // What the tree builder would do: these elements' content is text, not markup.
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

  private add(value: string, line: number): void {
    this.refs.push({ ref: value, line });
  }
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
  const collector = new RefCollector();
  const tokenizer = new Tokenizer({ sourceCodeLocationInfo: true }, collector);
  collector.tokenizer = tokenizer;
  tokenizer.write(html, true);
  return { refs: collector.refs, ...(collector.base !== undefined ? { base: collector.base } : {}) };
}

// No nested quantifiers: each pattern scans the text once, whatever it holds.
const CSS_COMMENT = /\/\*[\s\S]*?(?:\*\/|$)/g;
// An unquoted url() stops at the next "(" too, so "url(url(url(…" costs one pass, not one per "url(".
const CSS_URL = /url\(\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^()"'\s]*))\s*\)/gi;
const CSS_IMPORT = /@import\s+(?:"([^"\n]*)"|'([^'\n]*)')/gi;

/** `url()` and `@import "…"` of a style sheet; `firstLine` is the line the text starts on. */
export function cssRefs(css: string, firstLine = 1): LinkRef[] {
  // Comments are blanked, keeping their line breaks so lines still count right.
  const text = css.includes('/*') ? css.replace(CSS_COMMENT, (comment) => comment.replace(/[^\n]/g, ' ')) : css;
  const found: Array<{ index: number; ref: string }> = [];
  for (const match of text.matchAll(CSS_URL)) found.push({ index: match.index, ref: match[1] ?? match[2] ?? match[3] ?? '' });
  for (const match of text.matchAll(CSS_IMPORT)) found.push({ index: match.index, ref: match[1] ?? match[2] ?? '' });
  if (found.length === 0) return [];
  found.sort((a, b) => a.index - b.index);
  const refs: LinkRef[] = [];
  let line = firstLine;
  let at = 0;
  for (const { index, ref } of found) {
    for (; at < index; at++) if (text.charCodeAt(at) === 10) line++;
    refs.push({ ref, line });
  }
  return refs;
}
