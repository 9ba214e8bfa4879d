import { describe, expect, it } from 'vitest';

// The table of hostile ?next= values (rules' localReturnPath) is in test/security/forms.browser.test.ts.
import { formToken, isCrossSite, pageHeaders, tokensMatch } from '../../src/app/security.js';

describe('isCrossSite', () => {
  const app = 'http://app.localhost:8080';
  it.each([
    [app, undefined, false],
    ['http://evil.example', undefined, true],
    ['http://app.localhost:9999', undefined, true],
    ['http://x.sites.localhost:8080', undefined, true],
    ['null', undefined, true],
    [undefined, `${app}/sites/x`, false],
    [undefined, 'http://evil.example/page', true],
    [undefined, 'not a url', true],
    [undefined, undefined, false],
  ])('origin %j referer %j → %j', (origin, referer, expected) => {
    expect(isCrossSite(origin, referer, app)).toBe(expected);
  });
});

describe('form tokens', () => {
  it('bind a key to a value and compare in constant time', () => {
    const token = formToken('key', 'session-a');
    expect(tokensMatch(token, formToken('key', 'session-a'))).toBe(true);
    expect(tokensMatch(token, formToken('key', 'session-b'))).toBe(false);
    expect(tokensMatch(token, formToken('other', 'session-a'))).toBe(false);
    expect(tokensMatch(token, '')).toBe(false);
    expect(tokensMatch(token, null)).toBe(false);
  });
});

describe('page headers', () => {
  it('forbid inline script, framing and caching', () => {
    const headers = pageHeaders();
    expect(headers['Content-Security-Policy']).toContain("script-src 'self'");
    expect(headers['Content-Security-Policy']).toContain("frame-ancestors 'none'");
    expect(headers['Content-Security-Policy']).not.toContain('unsafe-inline');
    expect(headers['Referrer-Policy']).toBe('same-origin');
    expect(headers['X-Content-Type-Options']).toBe('nosniff');
    expect(headers['Cache-Control']).toBe('no-store');
  });

  it('let the consent form post to the client', () => {
    expect(pageHeaders({ formActions: ['http://127.0.0.1:5555'] })['Content-Security-Policy']).toContain("form-action 'self' http://127.0.0.1:5555;");
  });
});
