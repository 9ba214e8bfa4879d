import { describe, expect, it } from 'vitest';
import { objectPath } from '../../src/store/cluster-backup.js';

/**
 * A cluster backup keeps each object of the bucket at `<dir>/bucket/<key>`. A bucket may hold any
 * key, so a key that would name a file outside that folder, or no file at all, stops the backup
 * (and the restore) rather than write or read elsewhere.
 */
describe('where a backup keeps a bucket object', () => {
  it.each([
    ['blobs/ab/cd/abcd', '/b/bucket/blobs/ab/cd/abcd'],
    ['plinth/owner.json', '/b/bucket/plinth/owner.json'],
    ['a..b/c', '/b/bucket/a..b/c'],
  ])('%s is kept at %s', (key, path) => {
    expect(objectPath('/b', key)).toBe(path);
  });

  it.each(['../outside', 'blobs/../../etc/passwd', '/absolute', 'blobs//double', 'blobs/./here', 'trailing/', '', 'back\\slash', 'nul\u0000byte', '..'])(
    '%j is refused',
    (key) => {
      expect(() => objectPath('/b', key)).toThrow(/cannot be a file/);
    },
  );
});
