/**
 * The "Published with Plinth / Report abuse" pill on Anonymous and Free sites (SPEC 4.5.6). Plain
 * HTML with inline styles and no script: a site's CSP or scripts cannot be broken by it, and it
 * works with JavaScript off.
 *
 * Three ways a site could make it disappear without script are closed here:
 * - Its stylesheet. The pill lives in a declarative shadow root that the badge gives <body>
 *   (`<template shadowrootmode>`, which a browser's parser attaches with or without script), so
 *   no selector of the page reaches it; the page's own content is slotted and renders as before.
 *   Every inline declaration is `!important` too and starts from `all:initial`, against
 *   inheritance, animations and transitions, and for the copy used where there is no shadow root.
 * - Its body and html. A `transform`, `filter`, `contain`, `will-change` and the like on <body>
 *   or <html> makes that element, not the viewport, the box a fixed element is placed in, and
 *   pushes the pill off screen. The shadow root turns these off on body with `:host {…
 *   !important}`, which the page cannot outrank (important rules of a shadow tree beat those of
 *   the page around it, style attributes and cascade layers included); on html, a style sheet
 *   of the page's own does it, as strong as a page's ordinary rules but no stronger.
 * - Its markup. The badge goes where a browser's parser really puts it into <body>, not where a
 *   string search finds `</body>` (which may be inside a comment, a <textarea>, or an element
 *   left open that hides its content); see placement.ts and check.ts.
 * What a site can still do (script, a CSP without inline styles, a style attribute on <html>,
 * hiding or shrinking body, painting over it) is in docs/serving.md.
 */
import { expectedBadge, showsBadge, type BadgeKind, type ExpectedBadge } from './check.js';
import { proposePlacements, type Placement } from './placement.js';
import { escapeHtml } from '../rules/index.js';
import { readPageText, type PageText } from './page-text.js';

export type BadgeOptions = { siteName: string; reportUrl: string };

// Generic families only: a site's @font-face can claim any named family ('Segoe UI', Roboto…)
// and give it blank glyphs, but not `system-ui` or `sans-serif`.
const FONT = 'font:500 12px/1.4 system-ui,sans-serif';

const important = (declarations: string[]): string => declarations.map((declaration) => `${declaration} !important`).join(';');

/**
 * Where the pill sits. Bottom-right is the busiest corner of a page's own fixed controls (chat
 * buttons, back-to-top, toasts, presentation toolbars), so the pill defaults to bottom-left, and
 * a page that has controls there too picks another corner with
 * `<meta name="plinth-badge" content="top-right">`: no script, read when the badge is placed.
 */
export const BADGE_CORNERS = ['bottom-left', 'bottom-right', 'top-left', 'top-right'] as const;
export type BadgeCorner = (typeof BADGE_CORNERS)[number];
const DEFAULT_CORNER: BadgeCorner = 'bottom-left';

const pillStyle = (corner: BadgeCorner): string => {
  const [vertical, horizontal] = corner.split('-') as ['bottom' | 'top', 'left' | 'right'];
  return important([
    'all:initial',
    'position:fixed',
    `${horizontal}:12px`,
    `${vertical}:12px`,
    // Never past the middle of the screen: a control held to the other corner stays clear of it
    // even on a phone (the text wraps instead).
    'max-width:calc(50vw - 24px)',
    'box-sizing:border-box',
    // Highest z-index a browser accepts, so site overlays cannot hide the report link.
    'z-index:2147483647',
    'display:flex',
    'align-items:center',
    'gap:8px',
    'padding:4px 10px',
    'border-radius:999px',
    'background:rgba(20,20,20,.88)',
    'color:#fff',
    FONT,
    'box-shadow:0 1px 4px rgba(0,0,0,.3)',
  ]);
};

// Only the start of a page is searched: a <meta> belongs in <head>.
const META_SEARCH_CHARS = 64 * 1024;
const META_TAG = /<meta\b[^>]*>/gi;

/** The corner a page asks for with `<meta name="plinth-badge" content="…">`, else the default. */
export function badgeCorner(text: string): BadgeCorner {
  for (const match of text.slice(0, META_SEARCH_CHARS).matchAll(META_TAG)) {
    const tag = match[0];
    const name = /\sname\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
    if ((name?.[1] ?? name?.[2] ?? name?.[3] ?? '').toLowerCase() !== 'plinth-badge') continue;
    const content = /\scontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
    const value = (content?.[1] ?? content?.[2] ?? content?.[3] ?? '').trim().toLowerCase();
    return (BADGE_CORNERS as readonly string[]).includes(value) ? (value as BadgeCorner) : DEFAULT_CORNER;
  }
  return DEFAULT_CORNER;
}

const TEXT_STYLE = important(['all:initial', 'color:inherit', FONT]);
const LINK_STYLE = important(['all:initial', 'color:#9cd4ff', 'text-decoration:underline', 'cursor:pointer', 'white-space:nowrap', FONT]);

/**
 * What makes an element the containing block of fixed descendants (CSS Transforms, Filter
 * Effects, Containment, Will Change, Motion Path), or clips them (clip-path, mask), set back to
 * what does not. The root element is not made one by a filter, so a page-wide filter on <html>
 * is left alone.
 */
const NOT_A_CONTAINING_BLOCK = [
  'transform:none',
  'translate:none',
  'rotate:none',
  'scale:none',
  'perspective:none',
  'transform-style:flat',
  'contain:none',
  'content-visibility:visible',
  'will-change:auto',
  'offset-path:none',
  'clip-path:none',
  'mask:none',
];
const BODY_RESET = important([...NOT_A_CONTAINING_BLOCK, 'filter:none', 'backdrop-filter:none']);
const ROOT_RESET = important(NOT_A_CONTAINING_BLOCK);
// For the page's own cascade (html always; body where the shadow root is not used), more
// specific than rules on `html`, `:root` or an id of html: a page must mean to outrank it.
const ROOT = ':root:not(#plinth-badge#plinth-badge)';
const PAGE_STYLE = `<style>${ROOT}{${ROOT_RESET}}${ROOT}>body{${BODY_RESET}}</style>`;
const HOST_STYLE = `<style>:host{${BODY_RESET}}</style>`;
/** The name of a slot no shadow root of ours has: the light copy of the pill, which renders only where shadow roots do not exist. */
const FALLBACK_SLOT = 'plinth-badge';

/**
 * Room after the page's content for a pill in a bottom corner: without it the last lines of a
 * page stay under the pill however far one scrolls, as they did on a phone. Absolutely
 * positioned at its static place (right after the content in a block body), it only lengthens
 * the page's scrollable area: it is no flex or grid item and moves nothing. Its height follows
 * the pill's, which wraps onto more lines the narrower the screen.
 */
const ROOM_STYLE = important([
  'all:initial',
  'display:block',
  'position:absolute',
  'width:1px',
  'height:clamp(40px, calc(150px - 20vw), 76px)',
  'visibility:hidden',
  'pointer-events:none',
]);
const roomHtml = (corner: BadgeCorner): string => (corner.startsWith('bottom') ? `<div data-plinth-room aria-hidden="true" style="${ROOM_STYLE}"></div>` : '');

function pillHtml({ siteName, reportUrl }: BadgeOptions, corner: BadgeCorner, slot?: string): string {
  const name = escapeHtml(siteName);
  return (
    `<div data-plinth-badge${slot === undefined ? '' : ` slot="${slot}"`} style="${pillStyle(corner)}">` +
    `<span style="${TEXT_STYLE}">Published with Plinth</span>` +
    `<a href="${escapeHtml(reportUrl)}" rel="nofollow noopener" target="_blank"` +
    ` title="Report abuse on ${name}" style="${LINK_STYLE}">Report abuse</a>` +
    `</div>`
  );
}

/**
 * The badge's markup, of each kind:
 * - `shadow`, for every page whose body has no shadow root of its own: a light copy of the pill
 *   for browsers without declarative shadow roots (given a slot no one has, so others do not
 *   render it), then the shadow root for body (its style, a slot for the page's own content,
 *   the room the pill needs at the page's end, the pill after it), then the page-wide style for html.
 * - `bare`, for a page whose body is a declarative shadow host already (it goes into that shadow
 *   tree) or one that gives body's children slot names (they would not render in ours): the pill
 *   and a style with both kinds of rule, in the cascade it lands in.
 */
export function badgeMarkup(options: BadgeOptions, corner: BadgeCorner): Record<BadgeKind, string> {
  const pill = pillHtml(options, corner);
  return {
    shadow: `${pillHtml(options, corner, FALLBACK_SLOT)}<template shadowrootmode="open">${HOST_STYLE}<slot></slot>${roomHtml(corner)}${pill}</template>${PAGE_STYLE}`,
    bare: `${pill}<style>:host{${BODY_RESET}}${ROOT}{${ROOT_RESET}}${ROOT}>body{${BODY_RESET}}</style>`,
  };
}

// `</body` followed by what ends a tag name (or the end of input, where the tag is dropped).
const BODY_END_TAG = /<\/body(?=[\t\n\f\r />]|$)/gi;

/**
 * Text offset of the last `</body` (any case), or undefined. In a well-formed page this is the
 * real end of body, found without parsing; whether it is real is then checked by parsing.
 */
function lastBodyCloseOffset(text: string): number | undefined {
  let last: number | undefined;
  for (const match of text.matchAll(BODY_END_TAG)) last = match.index;
  return last;
}

function splice(html: Buffer, page: PageText, markup: string, at: Placement): Buffer {
  const byte = page.byteOffset(at.offset);
  return Buffer.concat([html.subarray(0, byte), page.encode(at.closers + markup), html.subarray(byte)]);
}

// Work per page is bounded: each attempt parses the whole page, on the HTTP thread (once per
// page and site: site-server.ts caches the result). A usual page needs one parse, one with
// <noscript> or <select> two or three, a hostile one three to five; pages built to defeat every
// placement (noscript games on top of a frameset or a shadow root) can need more. So attempts
// stop after this many characters parsed, or 16 parses, but a page gets at least 3 parses (for
// a 5 MB page, the first proposal is checked); past the budget the first proposal is served.
const PARSE_BUDGET_CHARS = 16 * 1024 * 1024;
const MAX_PARSES = 16;
const MIN_PARSES = 3;

interface Candidate {
  key: string;
  kind: BadgeKind;
  result: Buffer;
}

export function injectBadge(html: Buffer, options: BadgeOptions): Buffer {
  const page = readPageText(html);
  const markups = badgeMarkup(options, badgeCorner(page.text));
  const expected: Record<BadgeKind, ExpectedBadge> = { shadow: expectedBadge('shadow', markups.shadow), bare: expectedBadge('bare', markups.bare) };
  // With scripting off, <noscript> content is markup rather than text and can leave elements
  // open; pages without the word parse the same either way, so only pages with it pay twice.
  const noscript = /<noscript/i.test(page.text);
  const budget = Math.min(MAX_PARSES, Math.max(MIN_PARSES, Math.floor(PARSE_BUDGET_CHARS / Math.max(page.text.length, 1))));
  let parses = 0;
  const propose = (text: string, scriptingEnabled: boolean): ReturnType<typeof proposePlacements> => {
    parses += 1;
    return proposePlacements(text, scriptingEnabled);
  };
  const keyOf = (placement: Placement): string => `${placement.offset}:${placement.closers}`;
  const at = (kind: BadgeKind, placement: Placement): Candidate => ({
    key: `${kind}|${keyOf(placement)}`,
    kind,
    result: splice(html, page, markups[kind], placement),
  });
  let bestGuess: Buffer | undefined;
  // The usual page: straight before its last </body>. Not with a <select> in it: parse5 and
  // browsers may disagree about select content, which only the proposals allow for (placement.ts).
  const straight = /<select/i.test(page.text) ? undefined : { offset: lastBodyCloseOffset(page.text) ?? page.text.length, closers: '' };

  // A child of body with a slot name would not render in the badge's shadow root, which slots
  // only unnamed content: such pages may need the bare badge, so they try it beside the other.
  const slotNames = /\sslot\s*=/i.test(page.text);
  const kindsFor = (bodyIsShadowHost: boolean): BadgeKind[] => (bodyIsShadowHost ? ['bare'] : slotNames ? ['shadow', 'bare'] : ['shadow']);

  function* candidates(): Generator<Candidate> {
    // The usual page: one parse to confirm.
    if (straight) for (const kind of kindsFor(false)) yield at(kind, straight);
    const { placements: proposals, bodyIsShadowHost } = propose(page.text, true);
    // A body that is a shadow host of the page's own takes the bare badge, into that shadow tree.
    const kinds = kindsFor(bodyIsShadowHost);
    if (proposals[0] !== undefined) bestGuess = at(kinds[0]!, proposals[0]).result;
    for (const on of proposals) for (const kind of kinds) yield at(kind, on);
    // With scripting off the same spot may need other closers. Extra end tags are ignored by the
    // parse that does not need them, so both sets together are tried too.
    const off = noscript ? propose(page.text, false).placements : [];
    for (const on of proposals) {
      for (const other of off) {
        if (other.offset !== on.offset || other.closers === on.closers) continue;
        for (const kind of kinds) {
          yield at(kind, { offset: on.offset, closers: on.closers + other.closers });
          yield at(kind, { offset: on.offset, closers: other.closers + on.closers });
        }
      }
    }
    for (const other of off) for (const kind of kinds) yield at(kind, other);
    // Inserting the badge can change how the rest parses (before a <frameset>, the rest becomes
    // body content, where a <template shadowrootmode> makes body a shadow host), so place again
    // in each result; the first badge stays, unrendered, in the bytes. That is the bare badge
    // both times: the page's own shadow root is the one that must attach.
    for (const first of proposals) {
      const { key, result } = at('bare', first);
      const again = readPageText(result);
      for (const placement of propose(again.text, true).placements) {
        yield { key: `${key}|${keyOf(placement)}`, kind: 'bare', result: splice(result, again, markups.bare, placement) };
      }
    }
  }

  const tried = new Set<string>();
  let scriptingOnly: Buffer | undefined;
  for (const { key, kind, result } of candidates()) {
    if (parses >= budget) break;
    if (tried.has(key)) continue;
    tried.add(key);
    const text = readPageText(result).text;
    parses += 1;
    if (!showsBadge(text, expected[kind], true)) continue;
    if (!noscript) return result;
    parses += 1;
    if (showsBadge(text, expected[kind], false)) return result;
    // Browsers parse with scripting on unless a visitor turned JavaScript off: that view
    // decides when no placement satisfies both.
    scriptingOnly ??= result;
  }
  // Without a placement that passes (none is known to exist), the first proposal is the best guess.
  return scriptingOnly ?? bestGuess ?? splice(html, page, markups.shadow, { offset: page.text.length, closers: '' });
}
