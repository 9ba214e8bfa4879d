import { describe, expect, it } from 'vitest';
import { objectPath, toolConnection } from '../../src/store/cluster-backup.js';

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

/**
 * pg_dump and pg_restore are given the database's address on their command line, which every user
 * of the machine reads (`ps`): its password goes to them in their environment (PGPASSWORD), whether
 * the address carries it as its user part or as a `password` query parameter (which libpq reads).
 */
describe('how pg_dump and pg_restore are told the database', () => {
  it.each([
    ['postgres://plinth:user-part-secret@db.internal:5432/plinth', 'user-part-secret'],
    ['postgres://plinth@db.internal:5432/plinth?sslmode=require&password=query-secret', 'query-secret'],
    ['postgresql://plinth:p%40ss%2Fword@db.internal/plinth', 'p@ss/word'],
  ])('%s: the password in the environment, not the arguments', (url, password) => {
    const { dbname, env } = toolConnection(url);
    expect(dbname).not.toContain(password);
    expect(dbname).not.toContain(encodeURIComponent(password));
    expect(dbname).not.toMatch(/password=/);
    expect(dbname).toContain('db.internal');
    expect(env).toEqual({ PGPASSWORD: password });
  });

  it('keeps the other query parameters and gives no password when the address has none', () => {
    expect(toolConnection('postgres://plinth@db.internal/plinth?sslmode=require')).toEqual({
      dbname: 'postgres://plinth@db.internal/plinth?sslmode=require',
      env: {},
    });
  });
});
