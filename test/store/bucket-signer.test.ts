import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EMPTY_SHA256, encodeKeyPath, signRequest, type RequestToSign } from '../../src/store/bucket-signer.js';

/**
 * The bucket's own SigV4 signer against signatures known to be right: AWS's worked examples for
 * S3 ("Signature Calculations for the Authorization Header", example credentials, 24 May 2013),
 * and for what those examples leave out (a session token, another region, a HEAD) the signatures
 * the AWS SDK's own signer (@smithy/signature-v4) gives for the same request.
 */

const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const at = new Date('2013-05-24T00:00:00Z');
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('signRequest', () => {
  it.each<[string, Omit<RequestToSign, 'at'>, string]>([
    [
      "AWS's GET Object example (a range)",
      {
        method: 'GET',
        host: 'examplebucket.s3.amazonaws.com',
        path: '/test.txt',
        headers: { range: 'bytes=0-9' },
        payloadSha256: EMPTY_SHA256,
        region: 'us-east-1',
        credentials,
      },
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    ],
    [
      "AWS's PUT Object example (an encoded key, the body's hash)",
      {
        method: 'PUT',
        host: 'examplebucket.s3.amazonaws.com',
        path: `/${encodeKeyPath('test$file.text')}`,
        headers: { date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
        payloadSha256: sha256('Welcome to Amazon S3.'),
        region: 'us-east-1',
        credentials,
      },
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
    ],
    [
      'a PUT with a session token, path style on a port, another region',
      {
        method: 'PUT',
        host: '127.0.0.1:9000',
        path: '/plinth-test/blobs/ab/cd/abcd.gz',
        headers: { 'content-length': '5000' },
        payloadSha256: 'UNSIGNED-PAYLOAD',
        region: 'eu-west-1',
        credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzEXAMPLE//token+with/slashes=' },
      },
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/eu-west-1/s3/aws4_request, SignedHeaders=content-length;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=67ae81d85ee56ba96414c58d26b95746e00e58e3795004b05a8af4b7cf91fd57',
    ],
    [
      'a HEAD on a virtual-hosted bucket',
      { method: 'HEAD', host: 'plinth.s3.eu-west-1.amazonaws.com', path: '/blobs/00/11/0011', payloadSha256: EMPTY_SHA256, region: 'eu-west-1', credentials },
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=ff9c63761025307befd5417de03e420a6f3d9d96c7a6a3a5ac4fd4d654c39051',
    ],
  ])('signs %s', (_, request, authorization) => {
    const headers = signRequest({ ...request, at });
    expect(headers.authorization).toBe(authorization);
    expect(headers['x-amz-date']).toBe('20130524T000000Z');
    expect(headers['x-amz-security-token']).toBe(request.credentials.sessionToken);
  });

  it.each([
    ['blobs/ab/cd/0123.gz', 'blobs/ab/cd/0123.gz'],
    ['test$file.text', 'test%24file.text'],
    ["a b/c+d/(e)!*'", 'a%20b/c%2Bd/%28e%29%21%2A%27'],
  ])('encodes the key %s as %s', (key, path) => {
    expect(encodeKeyPath(key)).toBe(path);
  });
});
