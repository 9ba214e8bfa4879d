import { describe, expect, it } from 'vitest';
import { makePreviewLinkToken, previewLinkExpiry, type PreviewLinkClaims } from '../../src/rules/index.js';

/** Preview link tokens: a token opens exactly the preview it was made for, until it expires. */

const SECRET = 'server-secret';
const NOW = 1_800_000_000_000;
const CLAIMS: PreviewLinkClaims = { label: '2--calm-heron', siteId: 'site_a', revisionId: 'rev_two', since: 1000 };
const token = makePreviewLinkToken(SECRET, CLAIMS, NOW + 60_000);
const [prefix, expires, signature] = token.split('.') as [string, string, string];

describe('preview link tokens', () => {
  it('has the form pv1.<expiry>.<signature>', () => {
    expect(token).toMatch(/^pv1\.[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    expect(previewLinkExpiry(SECRET, token, CLAIMS, NOW)).toBe(NOW + 60_000);
  });

  it.each<[string, string, Partial<PreviewLinkClaims>, string?, number?]>([
    ['another preview of the site', token, { label: '3--calm-heron' }],
    ['another revision under the same number', token, { revisionId: 'rev_other' }],
    ['another site', token, { siteId: 'site_b', label: '2--other-site' }],
    ['the setting turned off and on (a new since)', token, { since: 1001 }],
    ['another server secret', token, {}, 'another-secret'],
    ['once expired', token, {}, SECRET, NOW + 60_000],
    ['a later expiry with the old signature', `${prefix}.${(NOW + 3_600_000).toString(36)}.${signature}`, {}],
    ['an altered signature', `${prefix}.${expires}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`, {}],
    ['a signature cut short', `${prefix}.${expires}.${signature.slice(0, 42)}`, {}],
    ['another version', `pv2.${expires}.${signature}`, {}],
    ['no expiry', `${prefix}..${signature}`, {}],
    ['an expiry written in another base', `${prefix}.${String(NOW + 60_000)}.${signature}`, {}],
    ['extra text after it', `${token}x`, {}],
    ['extra text before it', ` ${token}`, {}],
    ['a percent-encoded copy', encodeURIComponent(token).replace(/\./g, '%2E'), {}],
    ['an empty token', '', {}],
  ])('refuses %s', (_label, candidate, claims, secret = SECRET, now = NOW) => {
    expect(previewLinkExpiry(secret, candidate, { ...CLAIMS, ...claims }, now)).toBeUndefined();
  });
});
