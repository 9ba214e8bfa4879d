/**
 * Preview addresses: every revision in reach is served read-only at `<number>--<name>` under the
 * site domain, one DNS label, so a wildcard certificate for the site domain covers it. Site names
 * may not contain `--` (site-names.ts), so a label splits one way only.
 */

/** The highest revision number a preview label may carry (nine digits). */
const MAX_DIGITS = 9;

/** `{ name, number }` for a preview label, or undefined for a plain site label. */
export function parsePreviewLabel(label: string): { name: string; number: number } | undefined {
  const dashes = label.indexOf('--');
  if (dashes < 1 || dashes > MAX_DIGITS) return undefined;
  let number = 0;
  for (let i = 0; i < dashes; i++) {
    const digit = label.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    number = number * 10 + digit;
  }
  // `0--x` and `01--x` name no revision: numbers start at 1 and have one spelling.
  if (number === 0 || label.charCodeAt(0) === 48) return undefined;
  const name = label.slice(dashes + 2);
  if (name === '' || name.includes('--')) return undefined;
  return { name, number };
}

/** The host label of a revision's preview. */
export function previewLabel(name: string, number: number): string {
  return `${number}--${name}`;
}
