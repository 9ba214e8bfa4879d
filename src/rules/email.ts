/**
 * E-mail syntax, one rule for every form, setting and command: a local part without spaces,
 * angle brackets or quotes, and a domain of dot-separated DNS labels. Delivery is the real check;
 * this refuses what could never be delivered or could break a header.
 */
const EMAIL = /^[^\s@<>()[\]",;:\\]{1,64}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i;

/** The address trimmed and lower-cased, or undefined when it is not one. */
export function normaliseEmail(value: unknown): string | undefined {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}
