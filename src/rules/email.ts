import { DNS_LABEL_PATTERN } from './dns-label.js';

/**
 * E-mail syntax, one rule for every form, setting and command: a local part without spaces,
 * control characters, angle brackets or quotes, and a domain of dot-separated DNS labels.
 * Delivery is the real check; this refuses what could never be delivered or could break a header.
 * An address is shown to other people (invites, members, revision authors) and in terminals and
 * logs, where a control character (C0, DEL, C1) could rewrite or hide what is shown.
 */
const LABEL = DNS_LABEL_PATTERN.slice(1, -1);
const EMAIL = new RegExp(`^[^\\s\\u0000-\\u001f\\u007f-\\u009f@<>()[\\]",;:\\\\]{1,64}@${LABEL}(?:\\.${LABEL})+$`, 'i');

/** The address trimmed and lower-cased, or undefined when it is not one. */
export function normaliseEmail(value: unknown): string | undefined {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}
