/**
 * One DNS label as the service spells it: 1 to 63 lower-case letters, digits and hyphens, not
 * starting or ending with a hyphen. A site name, a preview's `<number>--<name>` and every label
 * of a custom domain are one; the host router, the API's schemas and the forms all check this one.
 */
export const DNS_LABEL_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$';

const DNS_LABEL = new RegExp(DNS_LABEL_PATTERN);

export function isDnsLabel(text: string): boolean {
  return DNS_LABEL.test(text);
}
