/**
 * The "Published with Plinth / Report abuse" badge of Anonymous and Free sites (SPEC 4.5.6):
 * where it goes in a page (as a browser's HTML parser would put it), and the page served with
 * it. Pure CPU work that imports nothing of ours but the rules, so serving threads and the ingest
 * worker can both run it.
 */
export { badgeCorner, badgeMarkup, injectBadge, BADGE_CORNERS, type BadgeCorner, type BadgeOptions } from './inject.js';
export { buildBadgedPage, MAX_BADGE_COMPRESS_BYTES, type BadgedPage } from './page.js';
