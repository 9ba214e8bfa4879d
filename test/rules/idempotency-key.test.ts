import { describe, expect, it } from 'vitest';
import { isIdempotencyKey, MAX_IDEMPOTENCY_KEY_CHARS } from '../../src/rules/index.js';

describe('isIdempotencyKey', () => {
  it.each([
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', true],
    ['a', true],
    ['deploy 2026-11-29 #1 (retry)', true],
    ['~!@#$%^&*()_+`-={}[]|\\:";\'<>?,./', true],
    ['x'.repeat(MAX_IDEMPOTENCY_KEY_CHARS), true],
    ['x'.repeat(MAX_IDEMPOTENCY_KEY_CHARS + 1), false],
    ['', false],
    ['tab\there', false],
    ['new\nline', false],
    ['nul\u0000', false],
    ['del\u007f', false],
    ['café', false],
    ['emoji 🚀', false],
  ])('%j → %s', (key, valid) => {
    expect(isIdempotencyKey(key)).toBe(valid);
  });
});
