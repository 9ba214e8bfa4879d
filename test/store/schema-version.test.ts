import { describe, expect, it } from 'vitest';
import { checkSchema, schemaRefusal, SCHEMA_TOO_NEW, type DatabaseSchema } from '../../src/store/schema-version.js';

/**
 * Whether a node that knows migrations up to `known` may run on a database: one as new as itself
 * or older (it migrates it), one newer only where the newer migrations declared, with
 * `schema_readable_from`, that nodes of its version still work there (an expand step of a rolling
 * upgrade). Anything else, including a declaration that is not a whole number, is refused.
 */
describe('which database schema a node runs on', () => {
  it.each<[string, DatabaseSchema, number, boolean]>([
    ['an empty database', { version: 0 }, 1, true],
    ['the same version', { version: 1 }, 1, true],
    ['an older database (this node migrates it)', { version: 1 }, 3, true],
    ['a newer database that declared nothing', { version: 2 }, 1, false],
    ['a much newer database', { version: 9 }, 1, false],
    ['a newer database readable from this version (expand step)', { version: 2, readableFrom: 1 }, 1, true],
    ['a newer database readable from an older version', { version: 3, readableFrom: 1 }, 2, true],
    ['a newer database readable only from a later version (contract step)', { version: 3, readableFrom: 2 }, 1, false],
    ['a newer database whose declaration is no number', { version: 2, readableFrom: Number.NaN }, 1, false],
    ['a newer database whose declaration is a fraction', { version: 2, readableFrom: 0.5 }, 1, false],
  ])('%s', (_case, database, known, runs) => {
    expect(schemaRefusal(database, known) === undefined).toBe(runs);
  });

  it('names both versions and says what to do', () => {
    expect(schemaRefusal({ version: 2 }, 1)).toMatch(/^database schema is version 2; this Plinth knows up to 1: upgrade Plinth/);
    expect(checkSchema({ version: 5, readableFrom: 4 }, 3)).toMatchObject({ code: SCHEMA_TOO_NEW, message: expect.stringContaining('is version 5') });
    expect(checkSchema({ version: 1 }, 1)).toBeUndefined();
  });
});
