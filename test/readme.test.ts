import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/errors.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('has an error table that matches the error catalogue', () => {
    const rows = [...readme.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(rows)).toEqual(ERROR_STATUS);
  });

  it('documents every PLINTH_* variable the config reads', () => {
    const source = readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');
    const used = new Set([...source.matchAll(/'(PLINTH_[A-Z_]+)'/g)].map((m) => m[1]!));
    used.add('PLINTH_LISTEN_HOST').add('PLINTH_DATA_DIR').add('PLINTH_LOG_LEVEL');
    for (const name of used) expect(readme, name).toContain(`\`${name}\``);
  });
});
