import { describe, expect, it } from 'vitest';
import { DNS_LABEL_PATTERN, isDnsLabel, isSiteNameSyntax, parseDomain, renameProblem, RESERVED_NAMES, SITE_NAME_PATTERN } from '../../src/rules/index.js';

/** Site names: the one DNS label syntax every surface checks, and the names people may choose. */

describe('one DNS label', () => {
  it.each<[string, boolean]>([
    ['a', true],
    ['calm-heron-4821', true],
    ['4--calm-heron-4821', true],
    ['a'.repeat(63), true],
    ['0', true],
    ['', false],
    ['a'.repeat(64), false],
    ['-site', false],
    ['site-', false],
    ['Site', false],
    ['my_site', false],
    ['my.site', false],
    ['café', false],
    ['site\n', false],
    [' site', false],
  ])('%j → %s', (text, expected) => {
    expect(isDnsLabel(text)).toBe(expected);
    expect(isSiteNameSyntax(text)).toBe(expected);
    expect(new RegExp(SITE_NAME_PATTERN).test(text)).toBe(expected);
  });

  it('is the syntax of every label of a custom domain', () => {
    const hosts = { docs: 'localhost', api: 'api.localhost', mcp: 'mcp.localhost', app: 'app.localhost', siteDomain: 'sites.localhost' };
    expect(parseDomain(`${'a'.repeat(63)}.example.org`, hosts).ok).toBe(true);
    expect(parseDomain(`${'a'.repeat(64)}.example.org`, hosts).ok).toBe(false);
    expect(SITE_NAME_PATTERN).toBe(DNS_LABEL_PATTERN);
  });
});

describe('renameProblem', () => {
  it.each([
    ['my-site', undefined],
    ['abcd', undefined],
    ['a'.repeat(63), undefined],
    ['site2026', undefined],
    ['blue-fox', undefined],
    ['blue-fox-12345', undefined],
    ['abc', '4 to 63'],
    ['a'.repeat(64), '4 to 63'],
    ['My-Site', 'lower-case'],
    ['my_site', 'lower-case'],
    ['my.site', 'lower-case'],
    ['café', 'lower-case'],
    ['-site', 'hyphen'],
    ['site-', 'hyphen'],
    ['xn--site', 'third and fourth'],
    ['brave-otter-1234', 'word-word-NNNN'],
    ['api', '4 to 63'],
    ['docs', 'reserved'],
    ['admin', 'reserved'],
    ['status', 'reserved'],
    ['www-', 'hyphen'],
  ])('%s → %s', (name, problem) => {
    const found = renameProblem(name);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('reserves the service hosts', () => {
    for (const name of ['api', 'app', 'mcp', 'docs', 'www', 'admin', 'mail', 'status']) expect(RESERVED_NAMES.has(name)).toBe(true);
  });
});
