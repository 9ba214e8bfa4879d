import { describe, expect, it } from 'vitest';
import { isClientMetadataUrl, isCodeVerifier, isFetchableAddress, matchResource, redirectUriMatches, redirectUriProblem, s256 } from '../../src/sites/oauth-rules.js';

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
  it.each([
    ['93.184.216.34', false, true],
    ['8.8.8.8', false, true],
    ['127.0.0.1', false, false],
    ['127.0.0.1', true, true],
    ['10.1.2.3', true, false],
    ['172.16.0.1', true, false],
    ['172.31.255.255', true, false],
    ['172.32.0.1', false, true],
    ['192.168.1.1', true, false],
    ['169.254.169.254', true, false],
    ['100.64.0.1', true, false],
    ['0.0.0.0', true, false],
    ['224.0.0.1', true, false],
    ['::1', false, false],
    ['::1', true, true],
    ['::ffff:10.0.0.1', true, false],
    ['::ffff:8.8.8.8', false, true],
    ['fd00::1', true, false],
    ['fe80::1', true, false],
    ['ff02::1', true, false],
    ['2001:db8::1', true, false],
    ['2606:4700::1111', false, true],
    ['not-an-ip', true, false],
  ])('%s (loopback allowed: %s) → %s', (address, allowLoopback, ok) => {
    expect(isFetchableAddress(address, allowLoopback)).toBe(ok);
  });
});
