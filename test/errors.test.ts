import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, refusalError, ServiceError, STORAGE_FULL, toErrorBody } from '../src/errors.js';

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

  it.each([
    [
      'a worker refusal with its agent message and details',
      { code: 'blocked_secret', message: 'A key.', agentMessage: 'Remove it.', details: { file: 'a.js', line: 2 } },
    ],
    ['a bare refusal', { code: 'bad_request', message: 'No index.html.' }],
    [
      'the full-disk answer',
      { code: STORAGE_FULL.code, message: STORAGE_FULL.message, agentMessage: STORAGE_FULL.agentMessage, details: STORAGE_FULL.details },
    ],
  ] as const)('rebuilds %s as the error it stands for', (_name, refusal) => {
    const err = refusalError(refusal);
    expect(err).toBeInstanceOf(ServiceError);
    expect({ code: err.code, message: err.message, agentMessage: err.agentMessage, details: err.details }).toEqual({
      agentMessage: undefined,
      details: undefined,
      ...refusal,
    });
  });

  it('matches on code, so errors that crossed a thread still map', () => {
    const plain = Object.assign(new Error('Base revision is stale.'), { code: 'conflict' });
    expect(toErrorBody(plain).status).toBe(409);
  });

  it.each([new Error('ENOENT: /secret/path'), 'a string', null, { code: 'nope', message: 'x' }])('hides unknown errors behind a generic 500 (%s)', (thrown) => {
    const mapped = toErrorBody(thrown);
    expect(mapped.status).toBe(500);
    expect(mapped.internal).toBe(true);
    expect(JSON.stringify(mapped.body)).not.toContain('secret');
    expect(mapped.body.error.code).toBe('internal');
  });

  it.each([
    ['a file system error', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })],
    ['a quota error', Object.assign(new Error('EDQUOT'), { code: 'EDQUOT' })],
    ['a full LMDB map', Object.assign(new Error('LMDB commit failed'), { code: 'MDB_MAP_FULL' })],
    ['an error caused by one', new Error('upload failed', { cause: Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }) })],
  ])('answers a full disk (%s) with 503, Retry-After and an agent message', (_, thrown) => {
    const mapped = toErrorBody(thrown);
    expect(mapped.status).toBe(503);
    expect(mapped.headers).toEqual({ 'Retry-After': '60' });
    expect(mapped.body).toEqual({
      error: { code: 'unavailable', message: expect.stringContaining('storage'), details: { reason: 'storage_full' } },
      agent_message: expect.stringContaining('Nothing was published'),
    });
    expect(JSON.stringify(mapped.body)).not.toContain('ENOSPC');
    // The operator still has to hear of it.
    expect(mapped.internal).toBe(true);
  });

  it.each([
    [
      'an unreachable bucket',
      Object.assign(new Error('the blob bucket could not be reached for blobs/ab/cd/… (ECONNREFUSED)'), { code: 'BUCKET_UNAVAILABLE' }),
    ],
    ['an error caused by one', new Error('publish failed', { cause: Object.assign(new Error('HTTP 503'), { code: 'BUCKET_UNAVAILABLE' }) })],
  ])('answers %s with 503, Retry-After and an agent message, naming no address', (_, thrown) => {
    const mapped = toErrorBody(thrown);
    expect(mapped.status).toBe(503);
    expect(mapped.headers).toEqual({ 'Retry-After': '30' });
    expect(mapped.body).toEqual({
      error: { code: 'unavailable', message: expect.stringContaining('storage'), details: { reason: 'storage_unreachable' } },
      agent_message: expect.stringContaining('Retry the same request'),
    });
    expect(JSON.stringify(mapped.body)).not.toMatch(/blobs\/|ECONNREFUSED|HTTP 503/);
    expect(mapped.internal).toBe(true);
  });

  it.each([
    ['a wait for the write lock past its bound', Object.assign(new Error("The cluster's write lock was not free within 2000 ms."), { code: 'RECORDS_BUSY' })],
    ['an error caused by one', new Error('commit failed', { cause: Object.assign(new Error('lock timeout'), { code: 'RECORDS_BUSY' }) })],
  ])('answers %s with 503 records_busy and Retry-After 5', (_, thrown) => {
    const mapped = toErrorBody(thrown);
    expect(mapped.status).toBe(503);
    expect(mapped.headers).toEqual({ 'Retry-After': '5' });
    expect(mapped.body).toEqual({
      error: { code: 'unavailable', message: expect.stringContaining('nothing was changed'), details: { reason: 'records_busy' } },
      agent_message: expect.stringContaining('Retry the same request'),
    });
    expect(JSON.stringify(mapped.body)).not.toMatch(/lock timeout|2000/);
    expect(mapped.internal).toBe(true);
  });

  it('gives every 503 a Retry-After, longer for a full disk', () => {
    expect(toErrorBody(new ServiceError('unavailable', 'busy')).headers).toEqual({ 'Retry-After': '5' });
    const rebuilt = new ServiceError('unavailable', 'full', { details: { reason: 'storage_full' } });
    expect(toErrorBody(rebuilt).headers).toEqual({ 'Retry-After': '60' });
    expect(toErrorBody(new ServiceError('unavailable', 'x', { headers: { 'Retry-After': '9' } })).headers).toEqual({ 'Retry-After': '9' });
  });
});
