import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, ServiceError, toErrorBody } from '../src/errors.js';

describe('toErrorBody', () => {
  it.each(Object.entries(ERROR_STATUS).filter(([code]) => code !== 'internal'))('maps %s to %i', (code, status) => {
    const mapped = toErrorBody(new ServiceError(code as keyof typeof ERROR_STATUS, 'what went wrong'));
    expect(mapped.status).toBe(status);
    expect(mapped.body).toEqual({ error: { code, message: 'what went wrong' } });
  });

  it('carries details, agent message and headers', () => {
    const err = new ServiceError('limit', 'Too many deploys.', {
      agentMessage: 'Wait an hour.',
      details: { retry_after_s: 60 },
      headers: { 'Retry-After': '60' },
    });
    expect(toErrorBody(err)).toEqual({
      status: 429,
      body: { error: { code: 'limit', message: 'Too many deploys.', details: { retry_after_s: 60 } }, agent_message: 'Wait an hour.' },
      headers: { 'Retry-After': '60' },
      internal: false,
    });
  });

  it('matches on code, so errors that crossed a thread still map', () => {
    const plain = Object.assign(new Error('Base revision is stale.'), { code: 'conflict' });
    expect(toErrorBody(plain).status).toBe(409);
  });

  it.each([new Error('ENOENT: /secret/path'), 'a string', null, { code: 'nope', message: 'x' }])(
    'hides unknown errors behind a generic 500 (%s)',
    (thrown) => {
      const mapped = toErrorBody(thrown);
      expect(mapped.status).toBe(500);
      expect(mapped.internal).toBe(true);
      expect(JSON.stringify(mapped.body)).not.toContain('secret');
      expect(mapped.body.error.code).toBe('internal');
    },
  );
});
