import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, securityHeaders, type SecurityVariant } from '../../src/http/index.js';

const VARIANTS: SecurityVariant[] = ['page', 'site', 'gate', 'resource', 'upload'];

describe('security headers', () => {
  it.each(VARIANTS)('the %s variant forbids sniffing', (variant) => {
    expect(securityHeaders(variant)['X-Content-Type-Options']).toBe('nosniff');
  });

  it.each([
    ['page', { 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'same-origin', 'Cross-Origin-Opener-Policy': 'same-origin' }],
    ['site', { 'Referrer-Policy': 'strict-origin-when-cross-origin' }],
    [
      'gate',
      {
        'Referrer-Policy': 'same-origin',
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      },
    ],
    ['resource', {}],
    ['upload', { 'Content-Security-Policy': "default-src 'none'; sandbox" }],
  ] as const)('the %s variant sends %o', (variant, expected) => {
    expect(securityHeaders(variant)).toEqual({
      'X-Content-Type-Options': 'nosniff',
      ...(variant === 'page' ? { 'Content-Security-Policy': contentSecurityPolicy() } : {}),
      ...expected,
    });
  });

  it('leaves a published site its own scripts: no CSP of ours', () => {
    expect(securityHeaders('site')['Content-Security-Policy']).toBeUndefined();
  });

  it('shares one frozen object per variant', () => {
    expect(securityHeaders('site')).toBe(securityHeaders('site'));
    expect(Object.isFrozen(securityHeaders('page'))).toBe(true);
  });

  it('sends our pages a strict CSP without inline script or style', () => {
    const csp = contentSecurityPolicy();
    expect(csp).not.toContain('unsafe');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(csp).toContain("form-action 'self'");
  });

  it('adds form-action sources to a page when asked, and to that page only', () => {
    expect(contentSecurityPolicy({ formActions: ['https://client.example'] })).toContain("form-action 'self' https://client.example");
    expect(securityHeaders('page', { formActions: ['https://client.example'] })['Content-Security-Policy']).toContain(
      "form-action 'self' https://client.example;",
    );
    expect(securityHeaders('page')['Content-Security-Policy']).toContain("form-action 'self';");
    expect(securityHeaders('site', { formActions: ['https://client.example'] })).toBe(securityHeaders('site'));
  });
});
