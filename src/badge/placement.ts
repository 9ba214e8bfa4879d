/**
 * Where the badge can go in a page so that the browser's parser puts it straight into <body>,
 * and which end tags have to come first. The page is parsed once with parse5, the WHATWG
 * tree-construction algorithm, through a subclass that only watches: at the moments that matter
 * (the real </body>, the start of raw-text elements, end of input) it copies the parser's state,
 * that is the stack of open elements and the list of active formatting elements.
 *
 * From a copy the closers follow: an end tag for each element open above body, newest first, so
 * each one closes the current node (the simple case of every end-tag rule), then one for each
 * formatting element no longer open, which removes it from the list (adoption agency step 4)
 * so the parser does not re-create it around the badge's text ("reconstruct the active
 * formatting elements"). An end tag that finds nothing to close is ignored, so closers are safe
 * to over-supply. Every placement is still checked by parsing the result (badge-check.ts);
 * these are proposals, in order of preference.
 */
import { InsertionMode, Parser, Token, Tokenizer, TokenizerMode, html, type DefaultTreeAdapterMap } from 'parse5';
import { hasShadowRootMode } from './check.js';

type Element = DefaultTreeAdapterMap['element'];
const $ = html.TAG_ID;

/** A proposal: insert `closers` and then the badge at text offset `offset`. */
export interface Placement {
  offset: number;
  closers: string;
}

/** The parser's state at a point of the input. */
interface Snapshot {
  offset: number;
  /** Open elements, html first. */
  stack: Element[];
  /** Active formatting elements, newest first, markers left out. */
  formatting: Element[];
  /** Text that ends a tokenizer state the point is inside of (only `]]>` for a CDATA section). */
  prefix?: string;
}

// What parse5 and browsers read the same way inside a <select>; see outsideSelect.
const SELECT_SAME_START = new Set([$.OPTION, $.OPTGROUP, $.HR, $.SELECT, $.INPUT, $.SCRIPT, $.TEMPLATE]);
const SELECT_SAME_END = new Set([$.OPTION, $.OPTGROUP, $.SELECT, $.SCRIPT, $.TEMPLATE]);

// Start tags after which the tokenizer may leave the data state (raw text, RCDATA, script data,
// plaintext). Whether one did is read from the tokenizer after the tag is processed.
const TEXT_TAGS = new Set([$.SCRIPT, $.STYLE, $.TEXTAREA, $.TITLE, $.XMP, $.IFRAME, $.NOEMBED, $.NOFRAMES, $.NOSCRIPT, $.PLAINTEXT]);

/** A tokenizer that also keeps source offsets on tokens (the tree builder does not). */
class LocatingTokenizer extends Tokenizer {
  /** Where the tag being read started, when input ends inside it (eof-in-tag drops such a tag). */
  partialTagStart(): number | undefined {
    const token = this.currentToken;
    const isTag = token !== null && (token.type === Token.TokenType.START_TAG || token.type === Token.TokenType.END_TAG);
    return isTag ? token.location?.startOffset : undefined;
  }
}

class PlacementRecorder extends Parser<DefaultTreeAdapterMap> {
  declare tokenizer: LocatingTokenizer;
  readonly text: string;
  readonly length: number;
  bodyEnd?: Snapshot;
  bodyStart?: number;
  framesetStart?: Snapshot;
  textStart?: Snapshot;
  firstNoscript?: Snapshot;
  eof?: Snapshot;
  shadowHost?: { template: Element; contentStart: number; end?: Snapshot };
  readonly selectStarts = new Map<Element, Snapshot>();
  /** Before the first select whose content parse5 and browsers read differently. */
  divergentSelect?: Snapshot;
  private lastToken?: Token.Token;
  private lastMarkup?: { start: number; end: number };

  constructor(text: string, scriptingEnabled: boolean) {
    super({ scriptingEnabled });
    // Offsets are needed on tokens only; node locations would cost a second time per element.
    this.tokenizer = new LocatingTokenizer({ ...this.options, sourceCodeLocationInfo: true }, this);
    this.text = text;
    this.length = text.length;
  }

  private snapshot(offset: number): Snapshot {
    const { items, stackTop } = this.openElements;
    const formatting: Element[] = [];
    for (let entry = this.activeFormattingElements.newest; entry !== null; entry = entry.older) {
      if ('element' in entry) formatting.push(entry.element);
    }
    return { offset, stack: items.slice(0, stackTop + 1) as Element[], formatting };
  }

  private start(token: Token.Token): number {
    return Math.min(token.location?.startOffset ?? this.length, this.length);
  }

  override onItemPush(node: Element, tid: number, isTop: boolean): void {
    super.onItemPush(node, tid, isTop);
    if (tid !== $.BODY || this.bodyStart !== undefined || this.lastToken === undefined) return;
    // Right after an explicit <body>, or before the token that made the parser create one.
    const token = this.lastToken;
    const explicit = token.type === Token.TokenType.START_TAG && token.tagID === $.BODY;
    this.bodyStart = explicit ? Math.min(token.location?.endOffset ?? this.length, this.length) : this.start(token);
  }

  override onCharacter(token: Token.CharacterToken): void {
    this.lastToken = token;
    super.onCharacter(token);
  }

  override onNullCharacter(token: Token.CharacterToken): void {
    this.lastToken = token;
    super.onNullCharacter(token);
  }

  override onComment(token: Token.CommentToken): void {
    this.lastMarkup = { start: this.start(token), end: token.location?.endOffset ?? 0 };
    super.onComment(token);
  }

  override onDoctype(token: Token.DoctypeToken): void {
    this.lastMarkup = { start: this.start(token), end: token.location?.endOffset ?? 0 };
    super.onDoctype(token);
  }

  override onStartTag(token: Token.TagToken): void {
    this.lastToken = token;
    const id = token.tagID;
    const before = TEXT_TAGS.has(id) || id === $.SELECT || id === $.FRAMESET ? this.snapshot(this.start(token)) : undefined;
    if (!SELECT_SAME_START.has(id)) this.noteSelectDivergence();
    super.onStartTag(token);
    const current = this.openElements.current as Element | undefined;
    if (before !== undefined) {
      if (TEXT_TAGS.has(id) && this.tokenizer.state !== TokenizerMode.DATA) this.textStart = before;
      if (id === $.NOSCRIPT) this.firstNoscript ??= before;
      if (id === $.SELECT && current?.tagName === 'select') this.selectStarts.set(current, before);
      if (id === $.FRAMESET && this.insertionMode === InsertionMode.IN_FRAMESET) this.framesetStart ??= before;
    }
    if (id === $.TEMPLATE && this.shadowHost === undefined && current?.tagName === 'template' && hasShadowRootMode(current.attrs)) {
      const parent = current.parentNode;
      if (parent !== null && 'tagName' in parent && parent.tagName === 'body') {
        this.shadowHost = { template: current, contentStart: Math.min(token.location?.endOffset ?? this.length, this.length) };
      }
    }
  }

  override onEndTag(token: Token.TagToken): void {
    this.lastToken = token;
    const id = token.tagID;
    const modeBefore = this.insertionMode;
    if (!SELECT_SAME_END.has(id)) this.noteSelectDivergence();
    const bodyOrHtml = id === $.BODY || id === $.HTML ? this.snapshot(this.start(token)) : undefined;
    const host = this.shadowHost;
    const closesHost = id === $.TEMPLATE && host !== undefined && host.end === undefined && this.openElements.contains(host.template);
    const beforeTemplate = closesHost ? this.snapshot(this.start(token)) : undefined;
    super.onEndTag(token);
    if (bodyOrHtml !== undefined) {
      // The end tags that end body: </body> taking "in body" to "after body", and </html> doing
      // so on its own. One seen in "after body" again (a second </html>) ends nothing.
      const after = this.insertionMode;
      const wasAfter = modeBefore === InsertionMode.AFTER_BODY || modeBefore === InsertionMode.AFTER_AFTER_BODY;
      if ((id === $.BODY && after === InsertionMode.AFTER_BODY) || (id === $.HTML && !wasAfter && after === InsertionMode.AFTER_AFTER_BODY)) {
        this.bodyEnd = bodyOrHtml;
      }
    }
    if (beforeTemplate !== undefined && !this.openElements.contains(host!.template)) host!.end = beforeTemplate;
  }

  /** Called before a tag parse5 reads differently from browsers when it is inside a select. */
  private noteSelectDivergence(): void {
    const mode = this.insertionMode;
    if (this.divergentSelect !== undefined || (mode !== InsertionMode.IN_SELECT && mode !== InsertionMode.IN_SELECT_IN_TABLE)) return;
    const { items, stackTop } = this.openElements;
    const select = items.slice(0, stackTop + 1).findLast((element) => (element as Element).tagName === 'select');
    if (select !== undefined) this.divergentSelect = this.selectStarts.get(select as Element);
  }

  override onEof(token: Token.EOFToken): void {
    this.lastToken = token;
    // parse5 calls onEof again after leaving text mode; the first call sees the input's end.
    if (this.eof === undefined) this.eof = this.eofSnapshot();
    super.onEof(token);
  }

  /**
   * Where to insert at the end of input. Input can end inside something the tokenizer has not
   * finished; going after it would put the badge inside, so it goes before it, where the
   * tokenizer was still in the data state, and the unfinished part stays unfinished as before.
   */
  private eofSnapshot(): Snapshot {
    // Inside a raw-text or RCDATA element (or plaintext): before that element's start tag.
    const state = this.tokenizer.state;
    const inText = this.insertionMode === InsertionMode.TEXT || state === TokenizerMode.PLAINTEXT;
    if (inText && this.textStart !== undefined) return this.textStart;
    if (state === TokenizerMode.DATA) return this.snapshot(this.length);
    // A CDATA section (SVG or MathML) is ended by `]]>` from any of its states; its text is
    // already in the tree, so nothing before it needs to move.
    if (state === TokenizerMode.CDATA_SECTION) return { ...this.snapshot(this.length), prefix: ']]>' };
    const tag = this.tokenizer.partialTagStart();
    if (tag !== undefined) return this.snapshot(tag);
    // A comment or doctype cut off by the end of input (emitted there, so it ends at the end).
    const markup = this.lastMarkup;
    if (markup !== undefined && markup.end >= this.length) return this.snapshot(markup.start);
    // A lone `<` or `</` at the very end, emitted as text.
    const lt = this.text.lastIndexOf('<');
    return this.snapshot(lt === -1 ? this.length : lt);
  }
}

// U+FFFD in a tag name can only come from a NUL (latin1 text has no U+FFFD of its own, and in
// UTF-16 either spelling gives U+FFFD again), so writing NUL reproduces the name.
const endTag = (name: string): string => `</${name.replaceAll('\uFFFD', '\0')}>`;

function closers(snapshot: Snapshot, container: Element | undefined): string | undefined {
  let base: number;
  if (container !== undefined) {
    base = snapshot.stack.indexOf(container);
    if (base === -1) return undefined;
  } else {
    // Body, or, before body exists, html: the badge's own start tag then makes the body.
    base = snapshot.stack.findIndex((element) => element.tagName === 'body' && element.namespaceURI === html.NS.HTML);
    if (base === -1) base = snapshot.stack.length > 0 ? 0 : -1;
  }
  const open = snapshot.stack.slice(base + 1).reverse();
  const onStack = new Set(snapshot.stack);
  const stale = snapshot.formatting.filter((element) => !onStack.has(element));
  return (snapshot.prefix ?? '') + [...open, ...stale].map((element) => endTag(element.tagName)).join('');
}

/**
 * Browsers now parse <select> content as ordinary elements (the customizable-select parser,
 * shipped in Chromium), where parse5 follows the older rules: it drops other tags inside a
 * select and closes it on <keygen>, <textarea> or a table tag. From such a tag on, the two can
 * disagree about everything: what is open, what stays in the list of formatting elements (the
 * browser keeps those opened inside the select), even where raw text ends. Options, optgroups,
 * <hr>, <script> and <template> they read alike. Before the select's start tag they agree, so:
 * - a placement after the first select with other content moves before that select;
 * - a placement inside a select parse5 still has open moves before it too.
 * Pages of the new customizable kind (buttons, images inside options) thus get the badge
 * before their first such select rather than before </body>; being fixed in place, it shows
 * in the same spot.
 */
function outsideSelect(snapshot: Snapshot, container: Element | undefined, recorder: PlacementRecorder): Snapshot {
  const divergent = recorder.divergentSelect;
  if (divergent !== undefined && divergent.offset < snapshot.offset) return divergent;
  const from = container === undefined ? 0 : snapshot.stack.indexOf(container) + 1;
  const select = snapshot.stack.slice(from).find((element) => element.tagName === 'select' && element.namespaceURI === html.NS.HTML);
  return (select !== undefined && recorder.selectStarts.get(select)) || snapshot;
}

function placement(snapshot: Snapshot | undefined, container: Element | undefined, recorder: PlacementRecorder): Placement | undefined {
  if (snapshot === undefined) return undefined;
  const moved = outsideSelect(snapshot, container, recorder);
  const tags = closers(moved, container);
  return tags === undefined ? undefined : { offset: moved.offset, closers: tags };
}

/**
 * Placements for the badge in `text`, best first: before the real </body> (or where input ends
 * when there is none), then right after body starts, then before a <frameset> that would replace
 * body, then before the first <noscript>. When body is a declarative shadow host, only places
 * inside that shadow tree are offered, and `bodyIsShadowHost` says so.
 */
export function proposePlacements(text: string, scriptingEnabled = true): { placements: Placement[]; bodyIsShadowHost: boolean } {
  const recorder = new PlacementRecorder(text, scriptingEnabled);
  recorder.tokenizer.write(text, true);
  const host = recorder.shadowHost;
  const proposals = host
    ? [
        placement(host.end ?? recorder.eof, host.template, recorder),
        { offset: host.contentStart, closers: '' },
        placement(recorder.firstNoscript, host.template, recorder),
      ]
    : [
        placement(recorder.bodyEnd, undefined, recorder),
        placement(recorder.eof, undefined, recorder),
        recorder.bodyStart === undefined ? undefined : { offset: recorder.bodyStart, closers: '' },
        placement(recorder.framesetStart, undefined, recorder),
        // Before the first <noscript> the parse is the same with scripting on and off.
        placement(recorder.firstNoscript, undefined, recorder),
      ];
  const seen = new Set<string>();
  const placements = proposals.filter((p): p is Placement => {
    if (p === undefined) return false;
    const key = `${p.offset}:${p.closers}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { placements, bodyIsShadowHost: host !== undefined };
}
