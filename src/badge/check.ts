/**
 * Whether a page, as a browser's parser builds it, shows the badge where nothing in the markup
 * can hide it: a direct child of <body> with its own subtree exactly as we wrote it. That rules
 * out a badge inside a comment or raw text, inside <template> content or foreign (SVG/MathML)
 * content, under an unclosed element that hides what it holds (<details>, <dialog>, [hidden],
 * <select>, <object> fallback…), or with its text wrapped in a formatting element the parser
 * re-created around it.
 *
 * This is the check every placement must pass, so it uses parse5's public `parse()` (the WHATWG
 * tree-construction algorithm) rather than anything of ours.
 */
import { parse, parseFragment, type DefaultTreeAdapterTypes as T } from 'parse5';

const HTML_NS = 'http://www.w3.org/1999/xhtml';

/** The badge as the parser builds it from its markup, for comparison node by node. */
export function badgeTree(markup: string): T.Element {
  const node = parseFragment(markup).childNodes[0];
  if (node === undefined || !('tagName' in node)) throw new Error('badge markup has no element');
  return node;
}

function isElement(node: T.Node, tagName: string): node is T.Element {
  return 'tagName' in node && node.tagName === tagName && node.namespaceURI === HTML_NS;
}

function sameTree(a: T.ChildNode, b: T.ChildNode): boolean {
  if (a.nodeName !== b.nodeName) return false;
  if ('value' in a || 'value' in b) return 'value' in a && 'value' in b && a.value === b.value;
  if (!('tagName' in a) || !('tagName' in b)) return false;
  if (a.namespaceURI !== b.namespaceURI || a.attrs.length !== b.attrs.length) return false;
  for (let i = 0; i < a.attrs.length; i++) {
    const x = a.attrs[i]!;
    const y = b.attrs[i]!;
    if (x.name !== y.name || x.value !== y.value || x.namespace !== y.namespace) return false;
  }
  if (a.childNodes.length !== b.childNodes.length) return false;
  return a.childNodes.every((child, i) => sameTree(child, b.childNodes[i]!));
}

/**
 * A <template shadowrootmode> whose parent is <body> turns body into a shadow host in browsers
 * with declarative shadow DOM (parse5 parses it as a plain template). Body's own children are
 * then rendered only if the shadow tree slots them, so the badge has to be in the shadow tree:
 * a top-level child of that template's content. Only the first such template attaches; later
 * ones stay ordinary templates.
 */
export function declarativeShadowRoot(body: T.Element): T.Template | undefined {
  for (const child of body.childNodes) {
    if (isElement(child, 'template') && hasShadowRootMode(child.attrs)) return child as T.Template;
  }
  return undefined;
}

export function hasShadowRootMode(attrs: ReadonlyArray<{ name: string; value: string }>): boolean {
  const mode = attrs.find((attr) => attr.name === 'shadowrootmode')?.value.toLowerCase();
  return mode === 'open' || mode === 'closed';
}

/**
 * True when the page (its text, BOM removed) puts a copy of `badge` where it renders. A copy the
 * site wrote itself counts: it is as visible as ours would be there.
 */
export function showsBadge(text: string, badge: T.Element, scriptingEnabled = true): boolean {
  const document = parse(text, { scriptingEnabled });
  const root = document.childNodes.find((node): node is T.Element => isElement(node, 'html'));
  const body = root?.childNodes.find((node): node is T.Element => isElement(node, 'body'));
  if (body === undefined) return false;
  const container = declarativeShadowRoot(body)?.content ?? body;
  return container.childNodes.some((child) => sameTree(child, badge));
}
