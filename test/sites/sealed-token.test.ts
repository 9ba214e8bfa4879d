import { expect, it } from 'vitest';
import { claimKeyFor, sealAccountToken, unsealAccountToken } from '../../src/sites/sealed-token.js';
it('round trip', () => {
  const st = 'st_abc';
  const key = claimKeyFor(st);
  const sealed = sealAccountToken('pl_secret', key);
  expect(unsealAccountToken(sealed, st)).toBe('pl_secret');
  expect(unsealAccountToken(sealed, 'st_other')).toBeUndefined();
  expect(claimKeyFor(st)).toBe(key);
});
