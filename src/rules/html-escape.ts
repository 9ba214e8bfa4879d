/**
 * Escapes text for HTML element content and quoted attribute values. Site names and URLs put into
 * our own markup (badge, status pages) go through this; both contexts are covered by the same five.
 * Non-ASCII becomes a numeric reference so our snippets stay ASCII: the badge is spliced into pages
 * whose charset we do not know, and ASCII reads the same in every ASCII-compatible encoding.
 */
const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']|[^\x00-\x7f]/gu, (char) => ENTITIES[char] ?? `&#x${char.codePointAt(0)!.toString(16)};`);
}
