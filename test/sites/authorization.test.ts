import { describe, expect, it } from 'vitest';
import { permissionsOf } from '../../src/sites/authorization.js';
import type { Caller } from '../../src/sites/index.js';
import type { Role, SiteRecord } from '../../src/store/index.js';

/** `permissions` of the site object: the same rules the operations enforce, as a table. */

const site = (state: SiteRecord['state'], claimed = true): SiteRecord => ({
  id: 'site_a',
  name: 'calm-heron-4821',
  plan: 'free',
  state,
  claimed,
  createdAt: 0,
  liveNumber: 1,
  lastNumber: 1,
});
const account: Caller = {
  kind: 'account',
  account: { id: 'acct_a', email: 'a@example.com', plan: 'free', createdAt: 0 },
  tokenHash: 'h',
  credential: 'api_token',
};
const siteToken: Caller = { kind: 'site_token', siteId: 'site_a', tokenHash: 'h', token: 'st_x' };

describe('permissionsOf', () => {
  it.each<[string, Caller, SiteRecord, Role, string[]]>([
    [
      'an owner',
      account,
      site('active'),
      'owner',
      ['read', 'list_members', 'deploy', 'rollback', 'rename', 'delete', 'manage_members', 'promote', 'set_access', 'delete_revision'],
    ],
    ['an editor', account, site('active'), 'editor', ['read', 'list_members', 'deploy', 'rollback', 'rename', 'promote']],
    ['a viewer', account, site('active'), 'viewer', ['read', 'list_members']],
    ['an owner of a taken-down site', account, site('taken_down'), 'owner', ['read', 'list_members', 'delete', 'manage_members']],
    ['an editor of a taken-down site', account, site('taken_down'), 'editor', ['read', 'list_members']],
    ["an unclaimed site's token", siteToken, site('active', false), 'owner', ['read', 'deploy', 'rollback', 'promote', 'delete_revision']],
    ["a claimed site's token", siteToken, site('active', true), 'owner', []],
  ])('%s may %j', (_label, caller, record, role, expected) => {
    expect(permissionsOf(caller, record, role)).toEqual(expected);
  });
});
