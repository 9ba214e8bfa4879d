import { describe, expect, it } from 'vitest';
import { classifyPostgresFailure, describePostgresFailure } from '../../src/store/postgres-errors.js';

/** Errors shaped as pg and Node give them when a connection cannot be made. */
const server = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });
const system = (code: string, message: string) => Object.assign(new Error(message), { code });
const URL = 'postgres://plinth:s3cret@db.internal:6543/records';

describe('PostgreSQL failures', () => {
  it.each([
    [
      'a wrong password',
      server('28P01', 'password authentication failed for user "plinth"'),
      'authentication',
      'the user or password was refused (password authentication failed',
    ],
    ['an unknown role', server('28000', 'role "ghost" does not exist'), 'authentication', 'role "ghost" does not exist'],
    ['no pg_hba.conf entry', server('28000', 'no pg_hba.conf entry for host "10.0.0.5"'), 'authentication', 'pg_hba.conf'],
    [
      'a missing database',
      server('3D000', 'database "records" does not exist'),
      'no_database',
      'the database does not exist (database "records" does not exist)',
    ],
    ['a refused connection', system('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.9:6543'), 'refused', 'connect ECONNREFUSED 10.0.0.9:6543'],
    [
      'a refused connection on every address',
      Object.assign(
        new AggregateError([system('ECONNREFUSED', 'connect ECONNREFUSED ::1:6543'), system('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6543')], ''),
        {
          code: 'ECONNREFUSED',
        },
      ),
      'refused',
      'connect ECONNREFUSED ::1:6543',
    ],
    [
      "pg's connection timeout",
      new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') }),
      'timed_out',
      'did not answer in time (Connection terminated due to connection timeout). Check that the host is up',
    ],
    ["pg-pool's checkout timeout", new Error('timeout exceeded when trying to connect'), 'timed_out', 'did not answer in time'],
    ['a host that does not answer', system('ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.9:6543'), 'timed_out', 'ETIMEDOUT'],
    ['an unknown host name', system('ENOTFOUND', 'getaddrinfo ENOTFOUND db.internal'), 'unknown_host', 'the host name is not known'],
    ['anything else', new Error('Connection terminated unexpectedly'), 'other', 'cannot be reached (Connection terminated unexpectedly)'],
  ])('%s: %s', (_what, err, kind, words) => {
    expect(classifyPostgresFailure(err)).toBe(kind);
    const message = describePostgresFailure(err, URL);
    expect(message).toContain(words);
    expect(message).toContain('PostgreSQL at db.internal:6543, database "records"');
    expect(message).not.toContain('s3cret');
  });

  it('finds the cause where the store wrapped it', () => {
    const wrapped = Object.assign(new Error('outer', { cause: server('3D000', 'database "x" does not exist') }), { code: 'RECORDS_UNAVAILABLE' });
    expect(classifyPostgresFailure(wrapped)).toBe('no_database');
  });

  it('names a database given without port or name by the defaults', () => {
    expect(describePostgresFailure(new Error('x'), 'postgres://db.internal')).toContain('PostgreSQL at db.internal:5432)');
  });
});
