import { describe, expect, it } from 'vitest';
import { statusPage, type StatusPageCode } from '../../src/serve/pages.js';

const CODES: StatusPageCode[] = [400, 404, 405, 410, 414, 416, 451, 500, 503];

describe('statusPage', () => {
  it.each([
    [404, 'Page not found', 'no page or site with this address'],
    [410, 'Site no longer available', 'expired or was deleted'],
    [451, 'Site taken down', 'taken down after a report of abuse'],
    [400, 'Bad request', 'could not be understood'],
    [405, 'Method not allowed', 'GET or HEAD'],
    [414, 'Address too long', 'longer than the server accepts'],
    [416, 'Range not satisfiable', 'outside its length'],
    [500, 'Something went wrong', 'try again'],
    [503, 'Temporarily unavailable', 'try again'],
  ] as const)('explains %i as "%s"', (status, title, sentence) => {
    const html = statusPage(status).toString('utf8');
    expect(html).toContain(`<title>${status} ${title}</title>`);
    expect(html).toContain(`<h1>${title}</h1>`);
    expect(html).toContain(sentence);
  });

  it.each([
    [404, 'There is no page at this address on <strong>blog</strong>.'],
    [410, '<strong>blog</strong> has expired or was deleted by its owner.'],
    [451, '<strong>blog</strong> was taken down after a report of abuse.'],
  ] as const)('names the site on the %i page', (status, sentence) => {
    expect(statusPage(status, { siteName: 'blog' }).toString('utf8')).toContain(sentence);
  });

  it.each(CODES)('keeps the %i page self-contained', (status) => {
    const html = statusPage(status, { siteName: 'x' }).toString('utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html).toContain('<meta name="robots" content="noindex">');
    expect(html).not.toMatch(/<script|\son[a-z]+=|\b(src|href)=|url\(|@import|<link/i);
  });

  it.each([
    ['markup', '<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['quotes', '"\'', '&quot;&#39;'],
    ['ampersands', 'a&b', 'a&amp;b'],
    ['the placeholder itself', '{site}', '<strong>{site}</strong>'],
    ['replacement patterns', "$&$'$`", '<strong>$&amp;$&#39;$`</strong>'],
  ])('escapes %s in the site name', (_name, siteName, escaped) => {
    const html = statusPage(404, { siteName }).toString('utf8');
    expect(html).toContain(escaped);
    expect(html).not.toContain('<script');
  });

  it.each(CODES)('returns the same cached buffer for the unnamed %i page', (status) => {
    expect(statusPage(status)).toBe(statusPage(status));
  });

  it.each(CODES)('does not cache the named %i page by a visitor-chosen name', (status) => {
    const first = statusPage(status, { siteName: 'a' });
    expect(statusPage(status, { siteName: 'a' })).not.toBe(first);
    expect(statusPage(status, { siteName: 'a' })).toEqual(first);
  });
});
