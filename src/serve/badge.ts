/**
 * The "Published with Plinth / Report" pill on Anonymous and Free sites (SPEC 4.5.6). Plain HTML
 * with inline styles and no script: a site's CSP or scripts cannot be broken by it, and it works
 * with JavaScript off.
 *
 * A site's stylesheet cannot restyle it: every inline declaration is `!important`, on the pill
 * and on each child, and starts from `all:initial`. An important declaration in a style
 * attribute beats every author style sheet rule, important or not, layered or not (CSS Cascade
 * 5, element-attached styles), and `all` resets what the site might set through inheritance, an
 * animation or a transition. What a site can still do is in docs/serving.md.
 */
import { escapeHtml } from './html-escape.js';

export type BadgeOptions = { siteName: string; reportUrl: string };

// Generic families only: a site's @font-face can claim any named family ('Segoe UI', Roboto…)
// and give it blank glyphs, but not `system-ui` or `sans-serif`.
const FONT = 'font:500 12px/1.4 system-ui,sans-serif';

const important = (declarations: string[]): string => declarations.map((declaration) => `${declaration} !important`).join(';');

const PILL_STYLE = important([
  'all:initial',
  'position:fixed',
  'right:12px',
  'bottom:12px',
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
const TEXT_STYLE = important(['all:initial', 'color:inherit', FONT]);
const LINK_STYLE = important(['all:initial', 'color:#9cd4ff', 'text-decoration:underline', 'cursor:pointer', FONT]);

function badgeHtml({ siteName, reportUrl }: BadgeOptions): string {
  const name = escapeHtml(siteName);
  return (
    `<div data-plinth-badge style="${PILL_STYLE}">` +
    `<span style="${TEXT_STYLE}">Published with Plinth</span>` +
    `<a href="${escapeHtml(reportUrl)}" rel="nofollow noopener" target="_blank"` +
    ` title="Report abuse on ${name}" style="${LINK_STYLE}">Report abuse</a>` +
    `</div>`
  );
}

const CLOSE_TAG_START = '</';
const BODY = 'body';

function isTagEnd(byte: number | undefined): boolean {
  // `</body>`, `</body >`, `</body\n>`; also end of input for a truncated page.
  return (
    byte === undefined ||
    byte === 0x3e /* > */ ||
    byte === 0x2f /* / */ ||
    byte === 0x20 ||
    byte === 0x09 ||
    byte === 0x0a ||
    byte === 0x0c ||
    byte === 0x0d
  );
}

/**
 * Byte offset of the last `</body` (any case), or -1. Searching backwards from the end finds the
 * real closing tag even when `</body>` appears earlier inside a comment, string or script, and
 * uses the native `lastIndexOf` so a large page costs a few scans, not a byte loop.
 */
function lastBodyCloseOffset(html: Buffer): number {
  let from = html.length;
  while (from >= 0) {
    const at = html.lastIndexOf(CLOSE_TAG_START, from);
    if (at === -1) return -1;
    const name = html.toString('latin1', at + 2, at + 2 + BODY.length).toLowerCase();
    if (name === BODY && isTagEnd(html[at + 2 + BODY.length])) return at;
    from = at - 1;
  }
  return -1;
}

export function injectBadge(html: Buffer, options: BadgeOptions): Buffer {
  const badge = Buffer.from(badgeHtml(options), 'utf8');
  const at = lastBodyCloseOffset(html);
  // Without `</body>` the browser still places trailing content inside the body.
  if (at === -1) return Buffer.concat([html, badge]);
  return Buffer.concat([html.subarray(0, at), badge, html.subarray(at)]);
}
