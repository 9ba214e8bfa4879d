/**
 * The "Published with Plinth / Report abuse" pill on Anonymous and Free sites (SPEC 4.5.6). Plain
 * HTML with inline styles and no script: a site's CSP or scripts cannot be broken by it, and it
 * works with JavaScript off.
 *
 * Two ways a site could make it disappear without script are closed here:
 * - Its stylesheet. Every inline declaration is `!important`, on the pill and on each child, and
 *   starts from `all:initial`: an important declaration in a style attribute beats every author
 *   style sheet rule, important or not, layered or not (CSS Cascade 5, element-attached styles),
 *   and `all` resets what the site might set through inheritance, an animation or a transition.
 * - Its markup. The badge goes where a browser's parser really puts it into <body>, not where a
 *   string search finds `</body>` (which may be inside a comment, a <textarea>, or an element
 *   left open that hides its content); see badge-placement.ts and badge-check.ts.
 * What a site can still do (script, a CSP without inline styles, hiding or shrinking body,
 * painting over it) is in docs/serving.md.
 */
import { badgeTree, showsBadge } from './check.js';
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

function badgeHtml({ siteName, reportUrl }: BadgeOptions, corner: BadgeCorner): string {
  const name = escapeHtml(siteName);
  return (
    `<div data-plinth-badge style="${pillStyle(corner)}">` +
    `<span style="${TEXT_STYLE}">Published with Plinth</span>` +
    `<a href="${escapeHtml(reportUrl)}" rel="nofollow noopener" target="_blank"` +
    ` title="Report abuse on ${name}" style="${LINK_STYLE}">Report abuse</a>` +
    `</div>`
  );
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
  result: Buffer;
}

export function injectBadge(html: Buffer, options: BadgeOptions): Buffer {
  const page = readPageText(html);
  const markup = badgeHtml(options, badgeCorner(page.text));
  const badge = badgeTree(markup);
  // With scripting off, <noscript> content is markup rather than text and can leave elements
  // open; pages without the word parse the same either way, so only pages with it pay twice.
  const noscript = /<noscript/i.test(page.text);
  const budget = Math.min(MAX_PARSES, Math.max(MIN_PARSES, Math.floor(PARSE_BUDGET_CHARS / Math.max(page.text.length, 1))));
  let parses = 0;
  const propose = (text: string, scriptingEnabled: boolean): Placement[] => {
    parses += 1;
    return proposePlacements(text, scriptingEnabled);
  };
  const keyOf = (placement: Placement): string => `${placement.offset}:${placement.closers}`;
  const at = (placement: Placement): Candidate => ({ key: keyOf(placement), result: splice(html, page, markup, placement) });
  let bestGuess: Buffer | undefined;

  function* candidates(): Generator<Candidate> {
    // The usual page: straight before its last </body>, one parse to confirm. Not with a
    // <select> in it: parse5 and browsers may disagree about select content, which only the
    // proposals allow for (badge-placement.ts).
    if (!/<select/i.test(page.text)) yield at({ offset: lastBodyCloseOffset(page.text) ?? page.text.length, closers: '' });
    const proposals = propose(page.text, true);
    bestGuess = proposals[0] === undefined ? undefined : at(proposals[0]).result;
    for (const on of proposals) yield at(on);
    // With scripting off the same spot may need other closers. Extra end tags are ignored by the
    // parse that does not need them, so both sets together are tried too.
    const off = noscript ? propose(page.text, false) : [];
    for (const on of proposals) {
      for (const other of off) {
        if (other.offset !== on.offset || other.closers === on.closers) continue;
        yield at({ offset: on.offset, closers: on.closers + other.closers });
        yield at({ offset: on.offset, closers: other.closers + on.closers });
      }
    }
    for (const other of off) yield at(other);
    // Inserting the badge can change how the rest parses (before a <frameset>, the rest becomes
    // body content, where a <template shadowrootmode> makes body a shadow host), so place again
    // in each result; the first badge stays, unrendered, in the bytes.
    for (const first of proposals) {
      const { key, result } = at(first);
      const again = readPageText(result);
      for (const placement of propose(again.text, true)) {
        yield { key: `${key}|${keyOf(placement)}`, result: splice(result, again, markup, placement) };
      }
    }
  }

  const tried = new Set<string>();
  let scriptingOnly: Buffer | undefined;
  for (const { key, result } of candidates()) {
    if (parses >= budget) break;
    if (tried.has(key)) continue;
    tried.add(key);
    const text = readPageText(result).text;
    parses += 1;
    if (!showsBadge(text, badge, true)) continue;
    if (!noscript) return result;
    parses += 1;
    if (showsBadge(text, badge, false)) return result;
    // Browsers parse with scripting on unless a visitor turned JavaScript off: that view
    // decides when no placement satisfies both.
    scriptingOnly ??= result;
  }
  // Without a placement that passes (none is known to exist), the first proposal is the best guess.
  return scriptingOnly ?? bestGuess ?? splice(html, page, markup, { offset: page.text.length, closers: '' });
}
