import { describe, expect, it } from 'vitest';
import { cacheControlFor } from '../../src/serve/headers.js';

describe('cacheControlFor', () => {
  it.each([
    ['text/html; charset=utf-8', 'public, max-age=60'],
    ['text/html', 'public, max-age=60'],
    ['TEXT/HTML', 'public, max-age=60'],
    ['text/css; charset=utf-8', 'public, max-age=300'],
    ['image/png', 'public, max-age=300'],
    ['application/octet-stream', 'public, max-age=300'],
    ['', 'public, max-age=300'],
  ])('gives %j %s', (type, expected) => {
    expect(cacheControlFor(type)).toBe(expected);
  });
});
