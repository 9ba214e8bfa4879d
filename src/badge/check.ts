/**
 * Whether a page, as a browser's parser builds it, shows the badge where nothing in the markup
 * can hide it. For the badge of kind `shadow` (inject.ts): its template is body's one declarative
 * shadow root, exactly as we wrote it (so it attaches, slots the page's content and holds the
 * pill), its light copy is a child of body, and no other child of body is kept out of the slot by
 * a slot name. For the `bare` kind: the pill is a direct child of body, or of the shadow tree of
 * a body that is a shadow host already. Either way that rules out a badge inside a comment or raw
 * text, inside <template> content or foreign (SVG/MathML) content, under an unclosed element that
 * hides what it holds (<details>, <dialog>, [hidden], <select>, <object> fallback…), or with its
 * text wrapped in a formatting element the parser re-created around it.
 *
 * This is the check every placement must pass, so it uses parse5's public `parse()` (the WHATWG
 * tree-construction algorithm) rather than anything of ours.
 */
import { parse, parseFragment, type DefaultTreeAdapterTypes as T } from 'parse5';

const HTML_NS = 'http://www.w3.org/1999/xhtml';

export type BadgeKind = 'shadow' | 'bare';

/** The badge as the parser builds it from its markup, for comparison node by node. */
export type ExpectedBadge = { kind: 'shadow'; fallback: T.Element; host: T.Template } | { kind: 'bare'; pill: T.Element };

export function expectedBadge(kind: BadgeKind, markup: string): ExpectedBadge {
  const nodes = parseFragment(markup).childNodes.filter((node): node is T.Element => 'tagName' in node);
  const [first, second] = nodes;
  if (first === undefined) throw new Error('badge markup has no element');
  if (kind === 'bare') return { kind, pill: first };
  if (second === undefined || !isElement(second, 'template')) throw new Error('badge markup has no template');
  return { kind, fallback: first, host: second as T.Template };
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
  if (!a.childNodes.every((child, i) => sameTree(child, b.childNodes[i]!))) return false;
  // A template's children are in its content.
  if (!('content' in a) || !('content' in b)) return !('content' in a) && !('content' in b);
  const [x, y] = [(a as T.Template).content.childNodes, (b as T.Template).content.childNodes];
  return x.length === y.length && x.every((child, i) => sameTree(child, y[i]!));
}

/**
 * A <template shadowrootmode> whose parent is <body> turns body into a shadow host in browsers
 * with declarative shadow DOM (parse5 parses it as a plain template). Body's own children are
 * then rendered only if the shadow tree slots them. Only the first such template attaches; later
 * ones stay ordinary templates, their content unrendered.
 */
export function declarativeShadowRoots(body: T.Element): T.Template[] {
  return body.childNodes.filter((child): child is T.Template => isElement(child, 'template') && hasShadowRootMode(child.attrs));
}

export function hasShadowRootMode(attrs: ReadonlyArray<{ name: string; value: string }>): boolean {
  const mode = attrs.find((attr) => attr.name === 'shadowrootmode')?.value.toLowerCase();
  return mode === 'open' || mode === 'closed';
}

/**
 * True when the page (its text, BOM removed) shows the badge as `expected` says. A copy the site
 * wrote itself counts: it is as visible as ours would be there.
 */
export function showsBadge(text: string, expected: ExpectedBadge, scriptingEnabled = true): boolean {
  const document = parse(text, { scriptingEnabled });
  const root = document.childNodes.find((node): node is T.Element => isElement(node, 'html'));
  const body = root?.childNodes.find((node): node is T.Element => isElement(node, 'body'));
  if (body === undefined) return false;
  const hosts = declarativeShadowRoots(body);
  if (expected.kind === 'bare') return (hosts[0]?.content ?? body).childNodes.some((child) => sameTree(child, expected.pill));
  // Ours must be the only one: before another, it would turn that one off.
  if (hosts.length !== 1 || !sameTree(hosts[0]!, expected.host)) return false;
  let fallback = false;
  for (const child of body.childNodes) {
    if (sameTree(child, expected.fallback)) fallback = true;
    else if ('attrs' in child && child.attrs.some((attr) => attr.name === 'slot')) return false;
  }
  return fallback;
}
