/// <reference lib="dom" />
// page.evaluate callbacks run in Chromium, where the DOM exists.
import type { Page } from 'playwright-core';

/**
 * Hostile pages aimed at the "Report abuse" badge, and how Chromium shows it: shared by the
 * serving attack file (test/security/serving.browser.test.ts) and the reliability project's full
 * sweep of the containing-block table (test/reliability/badge-containing-blocks.browser.test.ts).
 */

export const CONTENT = '<main><h1>A published page</h1><p>Some text of the site.</p></main>';
export const styled = (css: string, body = CONTENT): string =>
  `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Styled</title><style>${css}</style></head><body>${body}</body></html>`;

/**
 * Properties that make <html> or <body> the containing block of fixed descendants (or clip them),
 * so that the badge is placed in that element's box (the whole page, or none of it) rather than
 * the viewport: pushed below the fold, above the top, or clipped away, while the site looks the same.
 */
export const CONTAINING_BLOCKS: readonly string[] = [
  'transform:translateZ(0)',
  'transform:translate(0, 4000px)',
  'translate:0 0',
  'rotate:0deg',
  'scale:1',
  'perspective:100px',
  'transform-style:preserve-3d',
  'filter:blur(0)',
  'backdrop-filter:blur(0)',
  'contain:paint',
  'contain:layout',
  'contain:strict',
  'contain:content',
  'will-change:transform',
  'will-change:filter',
  'will-change:perspective',
  'will-change:contain',
  'will-change:offset-path',
  'content-visibility:auto',
  'content-visibility:hidden',
  'container-type:size',
  'container-type:inline-size',
  'offset-path:path("M0 0")',
  'clip-path:inset(0)',
  'mask:linear-gradient(#000,#000)',
  '-webkit-mask-image:linear-gradient(#000,#000)',
];
/** How a page sets one: a rule, an important rule, an important rule in a cascade layer, a style attribute. */
const SPELLINGS = ['a rule', 'an important rule', 'a layered important rule', 'a style attribute'] as const;
type Spelling = (typeof SPELLINGS)[number];
/** On html, by a rule and an important rule (docs/serving.md says what the other two can still do). */
const HTML_SPELLINGS = ['a rule', 'an important rule'] as const;
const LONG = `${CONTENT}${'<p>More of the site, so that it is taller than the window.</p>'.repeat(60)}`;

function containingBlockPage(element: 'html' | 'body', property: string, spelling: Spelling, short: boolean): string {
  const content = short ? CONTENT : LONG;
  const css =
    spelling === 'a rule'
      ? `${element}{${property}}`
      : spelling === 'an important rule'
        ? `${element}{${property} !important}`
        : spelling === 'a layered important rule'
          ? `@layer site{${element}{${property} !important}}`
          : '';
  const page = styled(css, content);
  if (spelling !== 'a style attribute') return page;
  return page.replace(`<${element}>`, `<${element} style='${property} !important'>`);
}

/** A row: an important rule goes on a short page (pushed above, or clipped), the others on a page taller than the window. */
function containingBlockRow(element: 'html' | 'body', property: string, spelling: Spelling): [string, string] {
  const short = spelling === 'an important rule';
  return [`${property} on ${element} by ${spelling}${short ? ', on a short page' : ''}`, containingBlockPage(element, property, spelling, short)];
}

/**
 * The containing-block rows. `all`: every property on body in each spelling and on html by a rule
 * and an important rule (the reliability project's sweep). Otherwise each property once on body
 * and once on html, the spellings taken in turn, so that every property and every spelling is
 * tried on each element (the serving attack file's table, a third of the size). A filter does not
 * make html a containing block: one that hides (opacity, blur) hides the whole site with the
 * badge, so html keeps its filter.
 */
export function containingBlockAttacks(all: boolean): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  CONTAINING_BLOCKS.forEach((property, i) => {
    for (const spelling of all ? SPELLINGS : [SPELLINGS[i % SPELLINGS.length]!]) rows.push(containingBlockRow('body', property, spelling));
    if (property.includes('filter:')) return;
    for (const spelling of all ? HTML_SPELLINGS : [HTML_SPELLINGS[i % HTML_SPELLINGS.length]!]) rows.push(containingBlockRow('html', property, spelling));
  });
  return rows;
}

/**
 * 'shown' when a visitor can see and click the report link on the page as it is now: an element
 * named "Report abuse" in the accessibility tree, a box of readable size inside the viewport,
 * nothing painted over its centre, visible and opaque all the way up, with text of a readable
 * size and colour. Otherwise what is wrong. `scrolledToEnd`: after scrolling the page to its end.
 */
export async function badgeShown(visitor: Page, scrolledToEnd = false): Promise<string> {
  // One round trip to the page: evaluateAll takes the matching links as they are, without waiting.
  return visitor.getByRole('link', { name: 'Report abuse' }).evaluateAll(async (links: Element[], scroll: boolean) => {
    if (scroll) {
      window.scrollTo(0, document.documentElement.scrollHeight);
      // What a visitor sees once the page has been drawn at its new place.
      await new Promise((drawn) => requestAnimationFrame(drawn));
    }
    const link = links[0];
    if (link === undefined) return 'no "Report abuse" link';
    const box = link.getBoundingClientRect();
    if (box.width < 20 || box.height < 8) return `a ${box.width}x${box.height} box`;
    if (box.left < 0 || box.top < 0 || box.right > innerWidth || box.bottom > innerHeight) return 'outside the viewport';
    const root = link.getRootNode() as Document | ShadowRoot;
    const hit = root.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    if (hit !== link) return `covered by <${hit?.localName}>`;
    const style = getComputedStyle(link);
    if (style.visibility !== 'visible') return `visibility ${style.visibility}`;
    if (parseFloat(style.fontSize) < 10) return `font-size ${style.fontSize}`;
    if (/rgba\(.*, 0\)$/.test(style.color) || style.color === 'transparent') return `colour ${style.color}`;
    let opacity = 1;
    for (let node: Element | null = link; node; node = node.parentElement ?? ((node.getRootNode() as ShadowRoot).host || null)) {
      const computed = getComputedStyle(node);
      opacity *= parseFloat(computed.opacity);
      if (computed.filter !== 'none' || computed.contentVisibility === 'hidden')
        return `${computed.filter} ${computed.contentVisibility} on <${node.localName}>`;
    }
    return opacity < 0.9 ? `opacity ${opacity}` : 'shown';
  }, scrolledToEnd);
}
