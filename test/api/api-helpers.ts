import { randomBytes } from 'node:crypto';
import { hashToken, type AccountRecord, type FileEntry, type Plan, type Role, type Store } from '../../src/store/index.js';
import { type ApiCall, type ApiResponse, callApi, request, type TestResponse } from '../helpers/http.js';
import { publishSite, storeFiles, type SiteFiles } from '../helpers/sites.js';
import type { TestServer } from '../helpers/server.js';

/** Fixtures for REST tests: accounts with tokens, sites made through the store, JSON calls. */

let counter = 0;
export const unique = (prefix: string): string => `${prefix}${Date.now().toString(36)}${(++counter).toString(36)}`;

export interface TestAccount {
  account: AccountRecord;
  token: string;
}

/** An account with an API token, made directly in the store (as the admin CLI does). */
export async function accountWithToken(store: Store, plan: AccountRecord['plan'] = 'builder'): Promise<TestAccount> {
  const account = await store.createAccount({ email: `${unique('person')}@example.com`, plan });
  const token = `pl_${randomBytes(24).toString('base64url')}`;
  await store.addApiToken({ accountId: account!.id, tokenHash: hashToken(token), name: 'test' });
  return { account: account!, token };
}

/** A site in an account, with optional extra members. */
export async function accountSite(
  store: Store,
  owner: TestAccount,
  members: Array<[TestAccount, Role]> = [],
  options: { plan?: Plan; files?: SiteFiles } = {},
): Promise<{ name: string; id: string; revision: string }> {
  const name = unique('site-');
  const { revision } = await publishSite(store, name, options.files ?? { 'index.html': `<h1>${name}</h1>` }, {
    plan: options.plan ?? owner.account.plan,
    claimed: true,
    accountId: owner.account.id,
  });
  const id = store.getSite(name)!.id;
  for (const [member, role] of members) await store.setMember(id, member.account.id, role);
  return { name, id, revision };
}

/** An unclaimed anonymous site with its site and claim tokens. */
export async function anonymousSite(
  store: Store,
  expiresAt: number,
  files: SiteFiles = { 'index.html': '<h1>anonymous</h1>' },
): Promise<{ name: string; id: string; revision: string; siteToken: string; claimToken: string }> {
  const name = unique('anon-');
  const siteToken = `st_${randomBytes(24).toString('base64url')}`;
  const claimToken = `ct_${randomBytes(24).toString('base64url')}`;
  const { revision } = await publishSite(store, name, files, {
    plan: 'anonymous',
    claimed: false,
    expiresAt,
    siteTokenHash: hashToken(siteToken),
    claimTokenHash: hashToken(claimToken),
  });
  return { name, id: store.getSite(name)!.id, revision, siteToken, claimToken };
}

/** A further revision of a site, based on its live one. */
export async function commitFiles(store: Store, name: string, files: SiteFiles, createdBy = 'admin'): Promise<{ id: string; number: number }> {
  const site = store.getSite(name)!;
  const entries: Map<string, FileEntry> = await storeFiles(store, files);
  const result = await store.commitRevision({ site: name, baseRevision: site.liveRevision ?? null, files: entries, kind: 'deploy', createdBy });
  if (!result.ok) throw new Error(`commit failed: ${result.reason}`);
  return { id: result.revision.id, number: result.revision.number };
}

export type { ApiCall, ApiResponse } from '../helpers/http.js';

/** One call to the API host; `json` is the parsed body (or undefined for a non-JSON answer). */
export const api = (server: TestServer, call: ApiCall): Promise<ApiResponse> => callApi(server.port, call);

/** A request to a published site on the serving host. */
export const visit = (server: TestServer, name: string, path = '/'): Promise<TestResponse> =>
  request({ port: server.port, host: `${name}.sites.localhost`, path });
