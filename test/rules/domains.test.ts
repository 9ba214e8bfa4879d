import { describe, expect, it } from 'vitest';
import { challengeName, hostOfHeader, isAtOrUnder, isApex, parseDomain, wwwPartner } from '../../src/rules/index.js';

const HOSTS = { docs: 'plinth.example', api: 'api.plinth.example', mcp: 'mcp.plinth.example', app: 'app.plinth.example', siteDomain: 'plinth-sites.example' };

describe('parseDomain', () => {
  it.each([
    ['www.example.org', 'www.example.org'],
    ['WWW.Example.ORG', 'www.example.org'],
    ['www.example.org.', 'www.example.org'],
    ['  example.org  ', 'example.org'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['ＥＸＡＭＰＬＥ.org', 'example.org'],
    ['a-b.c-d.example.co.uk', 'a-b.c-d.example.co.uk'],
    ['example.co.uk', 'example.co.uk'],
    ['blog.github.io', 'blog.github.io'],
  ])('accepts %j as %s', (input, domain) => {
    expect(parseDomain(input, HOSTS)).toEqual({ ok: true, domain });
  });

  it.each([
    ['an IPv4 address', '192.0.2.1'],
    ['an IPv4 address with a trailing dot', '192.0.2.1.'],
    ['an IPv6 address', '::1'],
    ['a bracketed IPv6 address', '[::1]'],
    ['a dotted number that is not an address', '1.2.3.4.5'],
    ['one label', 'localhost'],
    ['the site domain', 'plinth-sites.example'],
    ['a site host', 'my-site.plinth-sites.example'],
    ['the docs host', 'plinth.example'],
    ['a name under the docs host', 'evil.plinth.example'],
    ['the app host in capitals with a dot', 'APP.PLINTH.EXAMPLE.'],
    ['a local name', 'nas.local'],
    ['a .localhost name', 'x.localhost'],
    ['a reverse-DNS name', '1.0.0.127.in-addr.arpa'],
    ['a scheme', 'https://example.org'],
    ['a path', 'example.org/x'],
    ['a port', 'example.org:80'],
    ['user info', 'me@example.org'],
    ['a wildcard', '*.example.org'],
    ['an empty label', 'www..example.org'],
    ['a leading hyphen', '-www.example.org'],
    ['an underscore', '_dmarc.example.org'],
    ['a percent-encoded name', 'ex%61mple.org'],
    ['a space', 'www example.org'],
    ['a label of 64 characters', `${'a'.repeat(64)}.org`],
    ['254 characters', `${'a.'.repeat(126)}org`],
    ['a public suffix', 'co.uk'],
    ['a public suffix in capitals with a dot', 'CO.UK.'],
    ['a private public suffix', 'github.io'],
    ['another private public suffix', 'blogspot.com'],
    ['not a string', 7],
    ['nothing', undefined],
  ])('refuses %s', (_what, input) => {
    const result = parseDomain(input, HOSTS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem.length).toBeGreaterThan(10);
  });

  it('accepts 253 characters', () => {
    const domain = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.org`;
    expect(domain.length).toBe(253);
    expect(parseDomain(domain, HOSTS)).toEqual({ ok: true, domain });
  });
});

describe('zone apexes, by the Public Suffix List', () => {
  it.each([
    ['example.org', true],
    ['www.example.org', false],
    ['example.co.uk', true],
    ['www.example.co.uk', false],
    ['xn--bcher-kva.de', true],
    ['blog.github.io', false],
    ['example.unknown-tld', true],
  ])('%s: %s', (domain, apex) => expect(isApex(domain)).toBe(apex));
});

describe('helpers', () => {
  it.each([
    ['www.example.org', 'www.example.org'],
    ['WWW.EXAMPLE.ORG:8443', 'www.example.org'],
    ['www.example.org.', 'www.example.org'],
    ['www.example.org.:80', 'www.example.org'],
    ['[::1]:80', '[::1]:80'],
  ])('hostOfHeader(%j) is %s', (header, host) => expect(hostOfHeader(header)).toBe(host));

  it('pairs apex and www names', () => {
    expect(wwwPartner('example.org')).toBe('www.example.org');
    expect(wwwPartner('www.example.org')).toBe('example.org');
    expect(challengeName('example.org')).toBe('_plinth-challenge.example.org');
    expect(isApex('example.org')).toBe(true);
    expect(isApex('www.example.org')).toBe(false);
    // A name right under a country's second level is the apex of its zone too.
    for (const apex of ['example.co.uk', 'example.org.uk', 'example.com.au', 'example.co.jp', 'example.ne.jp', 'example.com.br', 'example.co.nz', 'ox.ac.uk'])
      expect(isApex(apex), apex).toBe(true);
    for (const name of ['www.example.co.uk', 'blog.example.co.uk', 'blog.example.org', 'www.example.com.au', 'a.b.example.org', 'docs.example.io'])
      expect(isApex(name), name).toBe(false);
    expect(isAtOrUnder('a.example.org', 'example.org')).toBe(true);
    expect(isAtOrUnder('aexample.org', 'example.org')).toBe(false);
  });
});
