import { describe, expect, it } from 'vitest';
import { describeBucketFailure } from '../../src/store/bucket-owner.js';

/** Errors shaped as @aws-sdk/client-s3 and Node give them for the start-up probe of the bucket. */
const sdk = (name: string, status: number | undefined, message: string) => Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
const options = { bucket: 'plinth-blobs', endpoint: 'http://minio.internal:9000', region: 'eu-west-1' };

describe('describeBucketFailure', () => {
  it.each([
    ['no such bucket', sdk('NoSuchBucket', 404, 'The specified bucket does not exist'), 'there is no bucket of that name (NoSuchBucket)'],
    [
      'an unknown key',
      sdk('InvalidAccessKeyId', 403, 'The AWS Access Key Id you provided does not exist'),
      'the credentials were refused (InvalidAccessKeyId: The AWS',
    ],
    [
      'a wrong secret',
      sdk('SignatureDoesNotMatch', 403, 'The request signature we calculated does not match'),
      'check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    ],
    ['an expired session', sdk('ExpiredToken', 400, 'The provided token has expired'), 'the credentials were refused (ExpiredToken'],
    ['no credentials at all', sdk('CredentialsProviderError', undefined, 'Could not load credentials from any providers'), 'no credentials were found'],
    ['a policy that denies', sdk('AccessDenied', 403, 'Access Denied'), 'access was denied (AccessDenied: Access Denied); the credentials must be allowed'],
    ['a bare 403', sdk('Forbidden', 403, ''), 'access was denied (Forbidden)'],
    [
      'another region',
      sdk('PermanentRedirect', 301, 'The bucket is in this region: us-west-2'),
      'the bucket is in another region than PLINTH_S3_REGION (eu-west-1)',
    ],
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' }),
      'http://minio.internal:9000 cannot be reached (connect ECONNREFUSED 127.0.0.1:9000)',
    ],
    [
      'a refused connection on every address',
      Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:9000'), { code: 'ECONNREFUSED' })], ''), { code: 'ECONNREFUSED' }),
      'cannot be reached',
    ],
    ['a timeout', sdk('TimeoutError', undefined, 'Connection timed out after 3000 ms'), 'cannot be reached (Connection timed out after 3000 ms)'],
    ['bytes read back wrong', Object.assign(new Error('plinth/probe/x read back 3 bytes'), { code: 'PROBE_MISMATCH' }), 'did not read back the same'],
    ['anything else', sdk('InternalError', 500, 'We encountered an internal error'), 'it answered InternalError: We encountered an internal error'],
  ])('%s', (_what, err, words) => {
    expect(describeBucketFailure(err, options)).toContain(words);
  });
});
