import { describe, expect, it } from 'vitest';
import { isClientMetadataUrl, isFetchableAddress, isCodeVerifier, matchResource, redirectUriMatches, redirectUriProblem, s256 } from '../../src/rules/index.js';

describe('redirect URIs a client may register', () => {
  it.each([
    ['https://app.example/callback', true],
    ['https://app.example:8443/cb?x=1', true],
    ['http://127.0.0.1/callback', true],
    ['http://127.0.0.1:33418/', true],
    ['http://[::1]:8080/cb', true],
    ['http://localhost:6274/oauth/callback', true],
    ['http://app.example/callback', false],
    ['http://localhost.evil.example/cb', false],
    ['https://app.example/cb#frag', false],
    ['https://user:pass@app.example/cb', false],
    ['cursor://anysphere.cursor/oauth', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
    ['', false],
  ])('%s → %s', (uri, ok) => {
    expect(redirectUriProblem(uri) === undefined).toBe(ok);
  });
});

describe('redirect URI matching', () => {
  const registered = ['https://app.example/cb', 'http://127.0.0.1/callback', 'http://localhost:9000/cb?x=1'];
  it.each([
    ['https://app.example/cb', true],
    ['https://app.example/cb/', false],
    ['https://app.example/CB', false],
    ['https://app.example:443/cb?extra=1', false],
    ['http://127.0.0.1:51234/callback', true],
    ['http://127.0.0.1/callback', true],
    ['http://127.0.0.1:51234/other', false],
    ['https://127.0.0.1:51234/callback', false],
    ['http://localhost:1/cb?x=1', true],
    ['http://localhost:1/cb?x=2', false],
    ['http://[::1]:51234/callback', false],
  ])('%s → %s', (uri, ok) => {
    expect(redirectUriMatches(uri, registered)).toBe(ok);
  });
});

describe('PKCE', () => {
  it('computes the S256 challenge of RFC 7636 appendix B', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
  it.each([
    ['a'.repeat(43), true],
    ['a'.repeat(128), true],
    ['a'.repeat(42), false],
    ['a'.repeat(129), false],
    [`${'a'.repeat(42)}+`, false],
    [undefined, false],
  ])('verifier %s → %s', (value, ok) => {
    expect(isCodeVerifier(value)).toBe(ok);
  });
});

describe('resource indicators', () => {
  const ours = ['http://mcp.localhost:8080/', 'http://mcp.localhost:8080/mcp'];
  it.each([
    ['http://mcp.localhost:8080', 'http://mcp.localhost:8080/'],
    ['http://mcp.localhost:8080/', 'http://mcp.localhost:8080/'],
    ['http://MCP.localhost:8080/mcp', 'http://mcp.localhost:8080/mcp'],
    ['http://mcp.localhost:8080/mcp/', undefined],
    ['http://mcp.localhost:8080/mcp#x', undefined],
    ['https://mcp.localhost:8080/mcp', undefined],
    ['http://mcp.localhost:8081/mcp', undefined],
    ['urn:plinth', undefined],
    ['nonsense', undefined],
  ])('%s → %s', (requested, expected) => {
    expect(matchResource(requested, ours)).toBe(expected);
  });
});

describe('client metadata document URLs', () => {
  it.each([
    ['https://app.example/client.json', true],
    ['https://app.example/', false],
    ['http://app.example/client.json', false],
    ['https://app.example/c#x', false],
    ['mcp_abc', false],
  ])('%s → %s', (value, ok) => {
    expect(isClientMetadataUrl(value)).toBe(ok);
  });
});

describe('addresses a metadata document may be fetched from', () => {
  // Classification only: nothing here connects anywhere. Each row is what a resolver could
  // return for a client_id host (or what the URL parser leaves of an IP literal).
  it.each([
    ['8.8.8.8'],
    ['93.184.216.34'],
    ['1.1.1.1'],
    ['172.32.0.1'],
    ['100.128.0.1'],
    ['2606:4700::1111'],
    ['2001:4860:4860::8888'],
    ['2a00:1450:4001:80b::200e'],
    ['2606:4700:4700:0000:0000:0000:0000:1111'],
    ['2606:4700::1111'.toUpperCase()],
    // Mapped and translated forms of public IPv4 reach public IPv4.
    ['::ffff:8.8.8.8'],
    ['::ffff:808:808'],
    ['64:ff9b::808:808'],
    ['64:ff9b::8.8.8.8'],
  ])('allows the public unicast address %s', (address) => {
    expect(isFetchableAddress(address, false)).toBe(true);
    expect(isFetchableAddress(address, true)).toBe(true);
  });

  it.each([
    // IPv4, each range ipaddr.js names
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified (this network)'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['192.0.0.1', 'reserved (IETF protocol assignments)'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['240.0.0.1', 'reserved (class E)'],
    ['192.175.48.1', 'AS112 anycast'],
    ['192.52.193.1', 'AMT anycast'],
    // IPv6, each range
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback, written out'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['FE80::1', 'link-local, upper case'],
    ['fe80::1%eth0', 'link-local with a zone id'],
    ['fe80::1%1', 'link-local with a numeric zone id'],
    ['2606:4700::1111%eth0', 'a zone id on any address'],
    ['fc00::1', 'unique local'],
    ['fd12:3456:789a::1', 'unique local'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'multicast'],
    ['FF05::1:3', 'multicast, upper case'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation (RFC 9637)'],
    ['2001:2::1', 'benchmarking'],
    ['100::1', 'discard'],
    ['2001:10::1', 'ORCHID'],
    ['2001:20::1', 'ORCHIDv2'],
    ['5f00::1', 'segment routing'],
    ['4000::1', 'outside 2000::/3'],
    ['1::1', 'outside 2000::/3'],
    // IPv4-mapped spellings of internal IPv4
    ['::ffff:127.0.0.1', 'mapped loopback, dotted'],
    ['::ffff:7f00:1', 'mapped loopback, hex (what the URL parser writes)'],
    ['::FFFF:7F00:1', 'mapped loopback, upper-case hex'],
    ['0:0:0:0:0:ffff:7f00:1', 'mapped loopback, written out'],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', 'mapped loopback, zero-padded'],
    ['::ffff:0:0', 'mapped unspecified'],
    ['::ffff:10.0.0.1', 'mapped private'],
    ['::ffff:a00:1', 'mapped private, hex'],
    ['::ffff:a9fe:a9fe', 'mapped link-local (cloud metadata)'],
    ['::ffff:192.168.0.1', 'mapped private'],
    ['::ffff:6440:1', 'mapped carrier-grade NAT'],
    ['::ffff:e000:1', 'mapped multicast'],
    // IPv4-compatible (deprecated), translated, NAT64, 6to4, Teredo
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::7f00:1', 'IPv4-compatible loopback, hex'],
    ['::10.0.0.1', 'IPv4-compatible private'],
    ['::8.8.8.8', 'IPv4-compatible, even of a public address'],
    ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
    ['::ffff:0:10.0.0.1', 'IPv4-translated private'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['64:ff9b::127.0.0.1', 'NAT64 loopback, dotted'],
    ['64:ff9b::a00:1', 'NAT64 private'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['64:FF9B::C0A8:1', 'NAT64 private, upper case'],
    ['64:ff9b:1::a00:1', 'local-use NAT64 (RFC 8215)'],
    ['64:ff9b:1:808:8:800::', 'local-use NAT64, whatever it embeds'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:a00:1::1', '6to4 of a private address'],
    ['2002:808:808::1', '6to4, even of a public address'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001::1', 'Teredo'],
    // Spellings that are not addresses a connection takes
    ['2130706433', 'decimal'],
    ['0177.0.0.1', 'octal'],
    ['0x7f.1', 'hex'],
    ['0x7f000001', 'hex'],
    ['127.1', 'short'],
    ['127.0.0.1.', 'trailing dot'],
    ['[::1]', 'bracketed'],
    [' 8.8.8.8', 'padded'],
    ['localhost', 'a name'],
    ['not-an-ip', 'not an address'],
    ['', 'empty'],
  ])('refuses %s (%s)', (address) => {
    expect(isFetchableAddress(address, false)).toBe(false);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.0.0.2', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    // Only what this machine delivers to its own loopback: a translator or tunnel is elsewhere.
    ['64:ff9b::7f00:1', false],
    ['::ffff:0:7f00:1', false],
    ['::127.0.0.1', false],
    ['2002:7f00:1::', false],
    ['127.1', false],
    ['2130706433', false],
    ['10.0.0.1', false],
    ['169.254.169.254', false],
    ['::ffff:10.0.0.1', false],
    ['0.0.0.0', false],
    ['::', false],
    ['fe80::1', false],
  ])('on a localhost install, %s → %s', (address, ok) => {
    expect(isFetchableAddress(address, true)).toBe(ok);
  });
});
