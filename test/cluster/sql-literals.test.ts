import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inlineValues } from '../../src/store/sql-literals.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/** Statements with their values written in (a commit's one round trip) read back as they were sent. */
describe('inlineValues against PostgreSQL', () => {
  let postgres: TestPostgres;
  let client: pg.Client;
  beforeAll(async () => {
    postgres = await startPostgres();
    client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
  }, 60_000);
  afterAll(async () => {
    await client?.end();
    await postgres?.stop();
  });

  it('reads back what the values were, whatever characters they hold', async () => {
    const hostile = ["'; DROP TABLE x; --", 'a$q$b', 'ends with $q', '\\\\ back\\slash', '$$ dollar $$', 'ünïcødé ✓ \n\t', '{"json": ["a", 1]}'];
    const text = inlineValues('SELECT $1::text[] AS texts, $2::bigint[] AS numbers, $3::jsonb AS doc', [hostile, [0, 9007199254740991], '{"k": "$q$\'"}']);
    const { rows } = await client.query<{ texts: string[]; numbers: string[]; doc: unknown }>(text);
    expect(rows[0]!.texts).toEqual(hostile);
    expect(rows[0]!.numbers).toEqual(['0', '9007199254740991']);
    expect(rows[0]!.doc).toEqual({ k: "$q$'" });
  });
});
