import { randomBytes } from 'node:crypto';

/**
 * A parameterised statement with its values written in as literals, for the simple query
 * protocol, which takes no parameters but several statements in one round trip. Strings are
 * dollar-quoted with a tag they do not contain (so no character of theirs is special), numbers
 * must be safe integers, arrays become `ARRAY[...]` (`'{}'` when empty; the statement casts them).
 */
export function inlineValues(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new RangeError(`no value for $${n}`);
    return literal(values[index]);
  });
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer for SQL: ${value}`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'string') return dollarQuoted(value);
  if (Array.isArray(value)) return value.length === 0 ? "'{}'" : `ARRAY[${value.map(literal).join(',')}]`;
  throw new TypeError(`no SQL literal for a ${typeof value}`);
}

function dollarQuoted(text: string): string {
  if (text.includes('\u0000')) throw new TypeError('PostgreSQL text cannot hold a NUL character');
  // The tag must first occur where it closes the string: not inside it, nor across its end.
  let tag = '$q$';
  while ((text + tag).indexOf(tag) !== text.length) tag = `$q${randomBytes(6).toString('hex')}$`;
  return `${tag}${text}${tag}`;
}
