import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { accountSite, accountWithToken, anonymousSite, unique, type TestAccount } from '../api/api-helpers.js';
import { AppClient } from '../app/http-client.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { useAppServer, useTestDns } from '../helpers/fixtures.js';
import { request, type TestResponse } from '../helpers/http.js';

/**
 * The authorization matrix (SPEC 3, 4, 5, 7): every kind of credential an attacker can present,
 * against every REST endpoint and every MCP tool, on the real server over loopback. A row is a
 * credential × an operation; it asserts the status, the error code, and the state afterwards:
 * a refused request changes nothing, an allowed one changes only what it should. Each row gets
 * fresh sites, so rows cannot affect each other; only the refused rows of one endpoint share
 * theirs, which each of them checks it left as it was.
 *
 * How to read it: CREDENTIALS says how each kind is sent and which column it answers as;
 * OPERATIONS has one row per endpoint with the status for each column. Any credential that is
 * sent but not valid (malformed, unknown, revoked, of another kind, for another surface) is
 * refused with 401 before any operation runs, so it has no column of its own.
 */

const HOUR = 3600_000;
const clock = Date.now();
let owner: TestAccount;
let editor: TestAccount;
let viewer: TestAccount;
let outsider: TestAccount;
/** Claims the anonymous sites of the "after the claim" rows. */
let claimer: TestAccount;
/** Account credentials that are not API tokens, made once. */
const keys = {
  revoked: '',
  ownerSession: '',
  oauth: {} as Record<'owner' | 'editor' | 'viewer' | 'outsider', string>,
  oauthExpired: '',
  oauthDisconnected: '',
  oauthOtherResource: '',
  refresh: '',
};

// ---------------------------------------------------------------------------------------------
// Columns: what a credential answers as.

const COLUMNS = ['none', 'site token', 'other site token', 'claimed site token', 'expired site token', 'non-member', 'viewer', 'editor', 'owner'] as const;
type Column = (typeof COLUMNS)[number];
/** `invalid`: refused with 401 everywhere. */
type Answer = Column | 'invalid';

/** Which site a row addresses: the team site, or anonymous sites around the credential's token. */
type Target = 'team' | 'own' | 'other' | 'claimed' | 'expired';

interface SiteRef {
  name: string;
  id: string;
  revision: string;
}

interface World {
  /** The account site with an owner, an editor and a viewer. */
  team: SiteRef;
  /** The site the row addresses. */
  site: SiteRef;
  /** The site and claim token of the anonymous site the credential comes from, if any. */
  siteToken?: string;
  claimToken?: string;
  /** A pending deletion approval of the addressed site. */
  approval: string;
  /** The owner's pending confirmation to remove the viewer from the team site. */
  confirm: string;
  /** A custom domain attached to the addressed site (rows about one domain). */
  domain?: string;
  /** A draft revision of the addressed site (rows about one revision). */
  draft?: string;
}

type Headers = Record<string, string | string[]>;
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });

/** Every kind of credential sent to the REST API: how it is sent, what it answers as, what it addresses. */
const CREDENTIALS: ReadonlyArray<[kind: string, answer: Answer, headers: (w: World) => Headers, target: Target]> = [
  ['no credential', 'none', () => ({}), 'team'],
  ["the owner's app session cookie on the API host", 'none', () => ({ cookie: `plinth_session=${keys.ownerSession}` }), 'team'],
  ['an API token under the Basic scheme', 'invalid', () => ({ authorization: `Basic ${owner.token}` }), 'team'],
  ['an API token under a "Token" scheme', 'invalid', () => ({ authorization: `Token ${owner.token}` }), 'team'],
  ['an API token with the site-token prefix', 'invalid', () => bearer(`st_${owner.token.slice(3)}`), 'team'],
  ['an empty bearer', 'invalid', () => ({ authorization: 'Bearer ' }), 'team'],
  ['"Bearer" twice', 'invalid', () => ({ authorization: `Bearer Bearer ${owner.token}` }), 'team'],
  ['two tokens in one header', 'invalid', () => ({ authorization: `Bearer ${viewer.token} ${owner.token}` }), 'team'],
  ["two Authorization headers, the second the owner's", 'invalid', () => ({ authorization: [`Bearer ${viewer.token}`, `Bearer ${owner.token}`] }), 'team'],
  ['a 64 KB bearer', 'invalid', () => bearer(`pl_${'A'.repeat(64 * 1024)}`), 'team'],
  ['an unknown site token', 'invalid', () => bearer(`st_${randomBytes(24).toString('base64url')}`), 'team'],
  ['an unknown API token', 'invalid', () => bearer(`pl_${randomBytes(32).toString('base64url')}`), 'team'],
  ["the owner's revoked API token", 'invalid', () => bearer(keys.revoked), 'team'],
  ['an unknown OAuth access token', 'invalid', () => bearer(`pla_${randomBytes(24).toString('base64url')}`), 'team'],
  ["the owner's OAuth access token (MCP only)", 'invalid', () => bearer(keys.oauth.owner), 'team'],
  ["the owner's OAuth refresh token", 'invalid', () => bearer(keys.refresh), 'team'],
  ["the owner's session cookie value as a bearer", 'invalid', () => bearer(keys.ownerSession), 'team'],
  ["the site's claim link token (ct_)", 'invalid', (w) => bearer(w.claimToken!), 'own'],
  ["the site's pending deletion approval token", 'invalid', (w) => bearer(w.approval), 'team'],
  ["the owner's API token, lower-case scheme (RFC 7235: the same scheme)", 'owner', () => ({ authorization: `bearer ${owner.token}` }), 'team'],
  ["the owner's API token with extra spaces (RFC 7235: 1*SP)", 'owner', () => ({ authorization: `Bearer    ${owner.token}  ` }), 'team'],
  ['the site token of the site, unclaimed', 'site token', (w) => bearer(w.siteToken!), 'own'],
  ['the site token of another unclaimed site', 'other site token', (w) => bearer(w.siteToken!), 'other'],
  ['the site token after the claim', 'claimed site token', (w) => bearer(w.siteToken!), 'claimed'],
  ['the site token of the site, expired', 'expired site token', (w) => bearer(w.siteToken!), 'expired'],
  ['an API token of a non-member', 'non-member', () => bearer(outsider.token), 'team'],
  ['an API token of a viewer', 'viewer', () => bearer(viewer.token), 'team'],
  ['an API token of an editor', 'editor', () => bearer(editor.token), 'team'],
  ['an API token of an owner', 'owner', () => bearer(owner.token), 'team'],
];

// ---------------------------------------------------------------------------------------------
// Operations.

interface Call {
  method?: string;
  path: string;
  /** JSON body. */
  json?: unknown;
  /** Raw body (an archive). */
  raw?: Buffer;
  headers?: Record<string, string>;
}

/** What the store says about the sites of a row, compared before and after. */
interface Snapshot {
  count: number;
  sites: Record<
    string,
    {
      name: string;
      state: string;
      claimed: boolean;
      live: string | undefined;
      access: string;
      previews: string;
      members: string[];
      invites: string[];
      domains: string[];
    }
  >;
  approval: string | undefined;
  /** Whether the row's draft still exists (rows about one revision). */
  draft: boolean | undefined;
}

type Statuses = readonly [
  none: number,
  site: number,
  otherSite: number,
  claimed: number,
  expired: number,
  outsider: number,
  viewer: number,
  editor: number,
  owner: number,
];

interface Operation {
  call(w: World): Call;
  statuses: Statuses;
  /** What an allowed call changes in the snapshot (nothing when absent). */
  effect?(s: Snapshot, body: any, w: World): void;
  /** Further checks of an allowed answer. */
  check?(body: any, w: World, answer: Column): void;
  prepare?(w: World): Promise<void>;
}

const page = '<h1>new</h1>';
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const inline = [{ path: 'index.html', content: page }];
const ACCOUNT_COLUMNS: readonly Answer[] = ['non-member', 'viewer', 'editor', 'owner'];

const created = (s: Snapshot): void => {
  s.count += 1;
};
const published = (s: Snapshot, body: any, w: World): void => {
  s.sites[w.site.id]!.live = body.revision.id;
};

/** A new site belongs to the account behind the credential, or is anonymous: never anyone else's. */
function checkCreated(body: any, _w: World, answer: Column): void {
  const site = server.store.getSite(body.site.name)!;
  const members = server.store.listMembers(site.id).map((m) => `${m.email} ${m.role}`);
  if (ACCOUNT_COLUMNS.includes(answer)) {
    expect(body.site_token).toBeUndefined();
    expect(members).toEqual([`${accountOf(answer).account.email} owner`]);
  } else {
    expect(body.site_token).toMatch(/^st_/);
    expect(site.claimed).toBe(false);
    expect(members).toEqual([]);
  }
}

/** Attaches a pending custom domain to the addressed site, as its owner would have. */
async function attachDomain(w: World): Promise<void> {
  w.domain = `${unique('dom')}.example.org`;
  const added = await server.store.addDomain({ domain: w.domain, siteId: w.site.id, token: 'plinth-verify=x', maxPerSite: 10 });
  expect(added.ok).toBe(true);
}

/** Stores a draft of the addressed site, as a deploy with publish=false would have. */
async function addDraft(w: World): Promise<void> {
  const result = await server.store.commitRevision({
    site: w.site.name,
    baseRevision: w.site.revision,
    files: new Map([['index.html', await server.store.blobs.putFile(Buffer.from('<h1>draft</h1>'), 'text/html; charset=utf-8', { compress: false })]]),
    kind: 'deploy',
    createdBy: 'admin',
    publish: false,
  });
  if (!result.ok) throw new Error(result.reason);
  w.draft = result.revision.id;
}

/** Each endpoint; `statuses` in COLUMNS order: none, site token, other site token, claimed site token, expired site token, non-member, viewer, editor, owner. */
/** The manifest the owner made for the manifest rows (made afresh in each row's `prepare`). */
let ownersManifest = '';
const OPERATIONS: Record<string, Operation> = {
  'POST /v1/deploy (archive, create)': {
    call: () => ({ method: 'POST', path: '/v1/deploy', raw: tgzBytes([['index.html', page]]) }),
    statuses: [201, 403, 403, 403, 403, 201, 201, 201, 201],
    effect: created,
    check: checkCreated,
  },
  'POST /v1/deploy (archive, update)': {
    call: (w) => ({
      method: 'POST',
      path: `/v1/deploy?site=${w.site.name}`,
      raw: tgzBytes([['index.html', page]]),
      headers: { 'x-base-revision': w.site.revision },
    }),
    statuses: [401, 201, 404, 403, 410, 404, 403, 201, 201],
    effect: published,
  },
  'POST /v1/deploy (JSON, create)': {
    call: () => ({ method: 'POST', path: '/v1/deploy', json: { files: inline } }),
    statuses: [201, 403, 403, 403, 403, 201, 201, 201, 201],
    effect: created,
    check: checkCreated,
  },
  'POST /v1/deploy (JSON, update)': {
    call: (w) => ({ method: 'POST', path: '/v1/deploy', json: { site: w.site.name, base_revision: w.site.revision, files: inline } }),
    statuses: [401, 201, 404, 403, 410, 404, 403, 201, 201],
    effect: published,
  },
  'POST /v1/deploy (JSON, patch)': {
    call: (w) => ({
      method: 'POST',
      path: '/v1/deploy',
      json: { site: w.site.name, base_revision: w.site.revision, patch: true, files: [{ path: 'new.html', content: page }] },
    }),
    statuses: [401, 201, 404, 403, 410, 404, 403, 201, 201],
    effect: published,
  },
  'POST /v1/deploy/manifest (update)': {
    call: (w) => ({
      method: 'POST',
      path: '/v1/deploy/manifest',
      json: { site: w.site.name, base_revision: w.site.revision, files: [{ path: 'index.html', size: page.length, sha256: sha(page) }] },
    }),
    statuses: [401, 201, 404, 403, 410, 404, 403, 201, 201],
    check: (body) => expect(body.manifest).toMatch(/^mf_/),
  },
  // A manifest is its maker's alone: every other credential is told there is no such manifest.
  'GET /v1/deploy/manifest/:id (the owner’s)': {
    prepare: async (w) => {
      ownersManifest = (await manifestOf(w.team, owner.token)).json.manifest;
    },
    call: () => ({ path: `/v1/deploy/manifest/${ownersManifest}` }),
    statuses: [404, 404, 404, 404, 404, 404, 404, 404, 200],
    check: (body) => expect(body.manifest).toBe(ownersManifest),
  },
  'DELETE /v1/deploy/manifest/:id (the owner’s)': {
    prepare: async (w) => {
      ownersManifest = (await manifestOf(w.team, owner.token)).json.manifest;
    },
    call: () => ({ method: 'DELETE', path: `/v1/deploy/manifest/${ownersManifest}` }),
    statuses: [404, 404, 404, 404, 404, 404, 404, 404, 200],
    check: () => expect(server.store.getManifest(ownersManifest)).toBeUndefined(),
  },
  'GET /v1/sites': {
    call: () => ({ path: '/v1/sites' }),
    statuses: [401, 403, 403, 403, 403, 200, 200, 200, 200],
  },
  'GET /v1/sites/:name': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}` }),
    statuses: [401, 200, 404, 200, 410, 404, 200, 200, 200],
    // Once claimed, the site token learns that and nothing more (SPEC 3, 5).
    check: (body, w, answer) =>
      answer === 'claimed site token' ? expect(body).toEqual({ claimed: true, agent_message: expect.any(String) }) : expect(body.name).toBe(w.site.name),
  },
  // A new claim link: the unclaimed site's token only; account credentials have no claim link to renew.
  'POST /v1/sites/:name/claim-link': {
    call: (w) => ({ method: 'POST', path: `/v1/sites/${w.site.name}/claim-link` }),
    statuses: [401, 201, 404, 403, 410, 404, 403, 403, 403],
    check: (body) => expect(body.claim_url).toMatch(/\/claim\/ct_/),
  },
  'GET /v1/sites/:name/files': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}/files` }),
    statuses: [401, 200, 404, 403, 410, 404, 200, 200, 200],
  },
  'GET /v1/sites/:name/files/<path>': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}/files/index.html` }),
    statuses: [401, 200, 404, 403, 410, 404, 200, 200, 200],
  },
  'GET /v1/sites/:name/revisions': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}/revisions` }),
    statuses: [401, 200, 404, 403, 410, 404, 200, 200, 200],
  },
  'GET /v1/sites/:name/analytics': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}/analytics` }),
    statuses: [401, 200, 404, 403, 410, 404, 200, 200, 200],
    check: (body, w) => expect(body).toMatchObject({ site: w.site.name, totals: { page_views: 0 } }),
  },
  // The audit log: members, and the site token while the site is unclaimed, as analytics.
  'GET /v1/sites/:name/events': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}/events` }),
    statuses: [401, 200, 404, 403, 410, 404, 200, 200, 200],
    check: (body) => expect(Array.isArray(body.events)).toBe(true),
  },
  'POST /v1/sites/:name/rollback': {
    // To what is live already: allowed callers change nothing (200, no revision), refused ones are refused first.
    call: (w) => ({ method: 'POST', path: `/v1/sites/${w.site.name}/rollback`, json: { revision: w.site.revision } }),
    statuses: [401, 200, 404, 403, 410, 404, 403, 200, 200],
    check: (body, w) => expect(body).toMatchObject({ unchanged: true, revision: { id: w.site.revision } }),
  },
  'POST /v1/sites/:name/promote': {
    // The live revision onto itself: allowed callers change nothing, refused ones are refused first.
    call: (w) => ({ method: 'POST', path: `/v1/sites/${w.site.name}/promote`, json: { revision: w.site.revision, base_revision: w.site.revision } }),
    statuses: [401, 200, 404, 403, 410, 404, 403, 200, 200],
    check: (body, w) => expect(body.revision.id).toBe(w.site.revision),
  },
  'DELETE /v1/sites/:name/revisions/:id': {
    prepare: addDraft,
    call: (w) => ({ method: 'DELETE', path: `/v1/sites/${w.site.name}/revisions/${w.draft}` }),
    // The site token is its unclaimed site's only owner.
    statuses: [401, 200, 404, 403, 410, 404, 403, 403, 200],
    effect: (s) => {
      s.draft = false;
    },
    check: (body, w) => expect(body).toMatchObject({ revision: { id: w.draft }, deleted: true }),
  },
  'GET /v1/sites/:name/access': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}/access` }),
    statuses: [401, 200, 404, 403, 410, 404, 200, 200, 200],
    check: (body) => expect(body).toEqual({ access: { mode: 'public', previews: 'public' } }),
  },
  'PUT /v1/sites/:name/access': {
    call: (w) => ({ method: 'PUT', path: `/v1/sites/${w.site.name}/access`, json: { mode: 'members' } }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 200],
    effect: (s, _body, w) => {
      s.sites[w.site.id]!.access = 'members';
    },
  },
  'PUT /v1/sites/:name/access (previews)': {
    call: (w) => ({ method: 'PUT', path: `/v1/sites/${w.site.name}/access`, json: { previews: 'members' } }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 200],
    effect: (s, _body, w) => {
      s.sites[w.site.id]!.previews = 'members';
    },
  },
  'POST /v1/sites/:name/rename': {
    call: (w) => ({ method: 'POST', path: `/v1/sites/${w.site.name}/rename`, json: { name: unique('renamed-') } }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 200, 200],
    effect: (s, body, w) => {
      s.sites[w.site.id]!.name = body.site.name;
    },
  },
  'DELETE /v1/sites/:name': {
    call: (w) => ({ method: 'DELETE', path: `/v1/sites/${w.site.name}` }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 202],
    // Nothing is deleted until an owner approves on the app (SPEC 4.3).
    check: (body) => expect(body.approve_url).toMatch(/\/approve\/ap_/),
  },
  'GET /v1/approvals/:token': {
    call: (w) => ({ path: `/v1/approvals/${w.approval}` }),
    // The approval token is the secret: any caller that holds it may read the outcome.
    statuses: [200, 200, 200, 200, 200, 200, 200, 200, 200],
    check: (body) => expect(body.status).toBe('pending'),
  },
  'GET /v1/sites/:name/members': {
    call: (w) => ({ path: `/v1/sites/${w.site.name}/members` }),
    statuses: [401, 403, 404, 403, 410, 404, 200, 200, 200],
  },
  'POST /v1/sites/:name/members': {
    call: (w) => ({ method: 'POST', path: `/v1/sites/${w.site.name}/members`, json: { email: `${unique('invited')}@example.com`, role: 'editor' } }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 201],
    effect: (s, body, w) => {
      s.sites[w.site.id]!.invites = [...s.sites[w.site.id]!.invites, `${body.invite.email} editor`].sort();
    },
  },
  'DELETE /v1/sites/:name/members/:email (step 1)': {
    call: (w) => ({ method: 'DELETE', path: `/v1/sites/${w.site.name}/members/${encodeURIComponent(viewer.account.email)}` }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 200],
    check: (body) => expect(body.confirm_token).toMatch(/^rm_/),
  },
  'DELETE /v1/sites/:name/members/:email?confirm (step 2)': {
    prepare: async (w) => {
      const first = await send({ method: 'DELETE', path: `/v1/sites/${w.team.name}/members/${encodeURIComponent(viewer.account.email)}` }, bearer(owner.token));
      w.confirm = first.json.confirm_token;
    },
    call: (w) => ({ method: 'DELETE', path: `/v1/sites/${w.site.name}/members/${encodeURIComponent(viewer.account.email)}?confirm=${w.confirm}` }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 200],
    effect: (s, _body, w) => {
      s.sites[w.site.id]!.members = s.sites[w.site.id]!.members.filter((m) => !m.startsWith(`${viewer.account.email} `));
    },
  },
  'GET /v1/sites/:name/domains': {
    prepare: attachDomain,
    call: (w) => ({ path: `/v1/sites/${w.site.name}/domains` }),
    statuses: [401, 403, 404, 403, 410, 404, 200, 200, 200],
    check: (body, w) => expect(body.domains).toEqual([expect.objectContaining({ domain: w.domain, status: 'pending' })]),
  },
  'POST /v1/sites/:name/domains': {
    call: (w) => ({ method: 'POST', path: `/v1/sites/${w.site.name}/domains`, json: { domain: `${unique('add')}.example.org` } }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 201],
    effect: (s, body, w) => {
      s.sites[w.site.id]!.domains = [...s.sites[w.site.id]!.domains, `${body.domain} pending`].sort();
    },
  },
  'POST /v1/sites/:name/domains/:domain/verify': {
    prepare: attachDomain,
    call: (w) => ({ method: 'POST', path: `/v1/sites/${w.site.name}/domains/${w.domain}/verify` }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 200],
    // The loopback DNS server has no record for it: still pending, with the reason.
    check: (body) => expect(body).toMatchObject({ status: 'pending', reason: expect.stringContaining('No TXT record') }),
  },
  'DELETE /v1/sites/:name/domains/:domain': {
    prepare: attachDomain,
    call: (w) => ({ method: 'DELETE', path: `/v1/sites/${w.site.name}/domains/${w.domain}` }),
    statuses: [401, 403, 404, 403, 410, 404, 403, 403, 200],
    effect: (s, _body, w) => {
      s.sites[w.site.id]!.domains = s.sites[w.site.id]!.domains.filter((d) => !d.startsWith(`${w.domain} `));
    },
  },
  'GET /v1/me': {
    call: () => ({ path: '/v1/me' }),
    statuses: [401, 403, 403, 403, 403, 200, 200, 200, 200],
  },
};

const CODES: Record<number, string> = { 400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 410: 'gone' };

function expected(operation: Operation, answer: Answer): number {
  return answer === 'invalid' ? 401 : operation.statuses[COLUMNS.indexOf(answer)]!;
}

function accountOf(answer: Answer): TestAccount {
  const accounts: Partial<Record<Answer, TestAccount>> = { 'non-member': outsider, viewer, editor, owner };
  return accounts[answer]!;
}

// ---------------------------------------------------------------------------------------------
// Worlds, snapshots, requests.

async function anonymous(expiresAt = clock + 72 * HOUR) {
  return anonymousSite(server.store, expiresAt);
}

/**
 * The world of a row that is refused, whether its credential is refused before any operation runs
 * or the operation refuses it. Such a row changes nothing (it checks that), so the refused rows of
 * one endpoint and target share one world rather than each making sites. Endpoints with a
 * `prepare` step get a fresh world per row, as every allowed row does.
 */
const refusalWorlds = new Map<string, Promise<World>>();
function worldFor(refused: boolean, endpoint: string, operation: Operation, target: Target): Promise<World> {
  if (!refused || operation.prepare) return world(target);
  const key = `${endpoint} ${target}`;
  let shared = refusalWorlds.get(key);
  if (!shared) refusalWorlds.set(key, (shared = world(target)));
  return shared;
}

async function world(target: Target): Promise<World> {
  const team = await accountSite(server.store, owner, [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ]);
  let site: SiteRef = team;
  let tokens: { siteToken?: string; claimToken?: string } = {};
  if (target === 'own' || target === 'claimed' || target === 'expired') {
    const anon = await anonymous(target === 'expired' ? clock - 1 : undefined);
    if (target === 'claimed') expect((await server.store.claimSite(hashToken(anon.claimToken), claimer.account.id)).ok).toBe(true);
    site = anon;
    tokens = anon;
  } else if (target === 'other') {
    const mine = await anonymous();
    site = await anonymous();
    tokens = mine;
  }
  const approval = `ap_${randomBytes(24).toString('base64url')}`;
  await server.store.putConfirmation(hashToken(approval), {
    kind: 'delete_site',
    siteId: site.id,
    requestedBy: owner.account.id,
    expiresAt: clock + 24 * HOUR,
    status: 'pending',
  });
  return {
    team,
    site: { name: site.name, id: site.id, revision: site.revision },
    siteToken: tokens.siteToken,
    claimToken: tokens.claimToken,
    approval,
    confirm: '',
  };
}

function snapshot(w: World): Snapshot {
  const store = server.store;
  const sites: Snapshot['sites'] = {};
  for (const id of new Set([w.team.id, w.site.id])) {
    const site = store.getSiteById(id)!;
    sites[id] = {
      name: site.name,
      state: site.state,
      claimed: site.claimed,
      live: site.liveRevision,
      access: site.access?.mode ?? 'public',
      previews: site.previews ? 'members' : 'public',
      members: store
        .listMembers(id)
        .map((m) => `${m.email} ${m.role}`)
        .sort(),
      invites: store
        .listInvites(id)
        .map((i) => `${i.email} ${i.role}`)
        .sort(),
      domains: store.listDomains(id).map((d) => `${d.domain} ${d.status}`),
    };
  }
  const approval = store.getConfirmation(hashToken(w.approval));
  return {
    count: store.listSiteIds().length,
    sites,
    approval: approval?.kind === 'delete_site' ? approval.status : undefined,
    draft: w.draft === undefined ? undefined : store.getRevision(w.draft) !== undefined,
  };
}

interface Answered extends TestResponse {
  json: any;
}

function parse(res: TestResponse): Answered {
  let json: unknown;
  try {
    json = JSON.parse(res.text);
  } catch {
    json = undefined;
  }
  return { ...res, json };
}

/** One request to the API host with the credential's headers (arrays: the header repeated). */
async function send(call: Call, credential: Headers): Promise<Answered> {
  const headers: Headers = { ...call.headers, ...credential };
  let body: string | Buffer | undefined = call.raw;
  if (call.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.json);
  }
  // node:http sends a header once per array element.
  const res = await request({
    port: server.port,
    host: 'api.localhost',
    method: call.method ?? 'GET',
    path: call.path,
    headers: headers as Record<string, string>,
    body,
  });
  return parse(res);
}

function expectRefusal(res: Answered, status: number): void {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(res.json?.error?.code, res.text.slice(0, 300)).toBe(CODES[status]);
  expect(typeof res.json.error.message).toBe('string');
  if (status === 401) expect(res.headers['www-authenticate']).toBe('Bearer');
}

// ---------------------------------------------------------------------------------------------

async function oauthToken(
  account: TestAccount,
  options: { expiresAt?: number; resource?: string } = {},
): Promise<{ access: string; refresh: string; grant: string }> {
  const code = randomBytes(24).toString('base64url');
  const access = `pla_${randomBytes(32).toString('base64url')}`;
  const refresh = `plr_${randomBytes(32).toString('base64url')}`;
  const grant = `grant_${randomBytes(12).toString('hex')}`;
  // Issued through the store as the token endpoint does after a person's consent; the MCP edge
  // resolves it by hash as it would a token from the flow (test/mcp/oauth-server.test.ts).
  await server.store.createAuthorizationCode(hashToken(code), {
    clientId: 'mcp_matrix',
    accountId: account.account.id,
    redirectUri: 'http://127.0.0.1/callback',
    codeChallenge: 'unused',
    resource: options.resource ?? `${server.config.publicUrls.mcp}/mcp`,
    scope: 'sites',
    expiresAt: clock + 60_000,
  });
  const outcome = await server.store.redeemAuthorizationCode(
    hashToken(code),
    () => true,
    { id: grant, clientName: 'matrix', redirectHost: '127.0.0.1' },
    {
      accessHash: hashToken(access),
      accessExpiresAt: options.expiresAt ?? clock + HOUR,
      refreshHash: hashToken(refresh),
      refreshExpiresAt: clock + 30 * 24 * HOUR,
    },
  );
  expect(outcome.ok).toBe(true);
  return { access, refresh, grant };
}

// Custom domains are looked up on a loopback DNS server that has no records.
const dns = useTestDns();
const server = useAppServer(() => ({ PLINTH_SITES_LIMIT_BUILDER: '1000000', PLINTH_DNS_SERVERS: dns.address }), { now: () => clock });

beforeAll(async () => {
  [owner, editor, viewer, outsider, claimer] = (await Promise.all([0, 1, 2, 3, 4].map(() => accountWithToken(server.store, 'builder')))) as [
    TestAccount,
    TestAccount,
    TestAccount,
    TestAccount,
    TestAccount,
  ];
  // A second token of the owner, revoked as the tokens page does.
  keys.revoked = `pl_${randomBytes(24).toString('base64url')}`;
  const info = await server.store.addApiToken({ accountId: owner.account.id, tokenHash: hashToken(keys.revoked), name: 'revoked' });
  expect(await server.store.revokeApiToken(owner.account.id, info.id)).toBe(true);
  keys.ownerSession = await new AppClient(server).signIn(owner.account.email);
  for (const [name, account] of [
    ['owner', owner],
    ['editor', editor],
    ['viewer', viewer],
    ['outsider', outsider],
  ] as const) {
    keys.oauth[name] = (await oauthToken(account)).access;
  }
  keys.refresh = (await oauthToken(owner)).refresh;
  keys.oauthExpired = (await oauthToken(owner, { expiresAt: clock - 1 })).access;
  keys.oauthOtherResource = (await oauthToken(owner, { resource: 'http://mcp.elsewhere.example/mcp' })).access;
  const disconnected = await oauthToken(owner);
  expect(await server.store.revokeOAuthGrant(disconnected.grant, 'disconnected', owner.account.id)).toBe(true);
  keys.oauthDisconnected = disconnected.access;
});

// ---------------------------------------------------------------------------------------------
// REST

const restRows = Object.entries(OPERATIONS).flatMap(([name, operation]) =>
  CREDENTIALS.map(([kind, answer, headers, target]) => ({ name, kind, answer, headers, target, operation, status: expected(operation, answer) })),
);

describe('REST: every credential × every endpoint', () => {
  it('has a row for each pair', () => {
    expect(restRows).toHaveLength(Object.keys(OPERATIONS).length * CREDENTIALS.length);
  });

  it.each(restRows.map((row) => [row.name, row.kind, row.status, row] as const))('%s with %s → %i', async (_name, _kind, status, row) => {
    const w = await worldFor(status >= 400, `rest ${row.name}`, row.operation, row.target);
    await row.operation.prepare?.(w);
    const before = snapshot(w);
    const res = await send(row.operation.call(w), row.headers(w));
    const after = snapshot(w);
    if (status >= 400) {
      expectRefusal(res, status);
      expect(after).toEqual(before);
      return;
    }
    expect(res.status, res.text.slice(0, 300)).toBe(status);
    row.operation.effect?.(before, res.json, w);
    expect(after).toEqual(before);
    row.operation.check?.(res.json, w, row.answer as Column);
  });

  it.each([
    ["an unknown token, then the owner's", () => [`Bearer pl_${randomBytes(24).toString('base64url')}`, `Bearer ${owner.token}`]],
    ["the owner's token, then an unknown one", () => [`Bearer ${owner.token}`, `Bearer pl_${randomBytes(24).toString('base64url')}`]],
    ["the owner's token twice", () => [`Bearer ${owner.token}`, `Bearer ${owner.token}`]],
  ])('refuses two Authorization headers (%s) with 401, not whichever came last', async (_what, values) => {
    const res = await send({ path: '/v1/me' }, { authorization: values() });
    expectRefusal(res, 401);
    const w = await world('team');
    const before = snapshot(w);
    const deploy = await send(OPERATIONS['POST /v1/deploy (JSON, update)']!.call(w), { authorization: values() });
    expectRefusal(deploy, 401);
    expect(snapshot(w)).toEqual(before);
  });

  it('tells an OAuth caller on REST to use the MCP server', async () => {
    const res = await send({ path: '/v1/me' }, bearer(keys.oauth.owner));
    expectRefusal(res, 401);
    expect(res.json.agent_message).toContain('MCP');
  });
});

// ---------------------------------------------------------------------------------------------
// MCP: each tool answers as its REST twin for every credential that gets through; without a
// valid token the endpoint refuses before any tool runs (401 with the OAuth discovery pointer).

const MCP_CREDENTIALS: ReadonlyArray<[kind: string, answer: Column | 'refused', headers: (w: World) => Headers, target: Target]> = [
  ['no credential', 'refused', () => ({}), 'team'],
  ["the owner's app session cookie", 'refused', () => ({ cookie: `plinth_session=${keys.ownerSession}` }), 'team'],
  ['an API token under the Basic scheme', 'refused', () => ({ authorization: `Basic ${owner.token}` }), 'team'],
  ["two Authorization headers, the second the owner's", 'refused', () => ({ authorization: [`Bearer ${viewer.token}`, `Bearer ${owner.token}`] }), 'team'],
  ["the owner's revoked API token", 'refused', () => bearer(keys.revoked), 'team'],
  ["the site's claim link token (ct_)", 'refused', (w) => bearer(w.claimToken!), 'own'],
  ["the owner's OAuth refresh token", 'refused', () => bearer(keys.refresh), 'team'],
  ["the owner's expired OAuth access token", 'refused', () => bearer(keys.oauthExpired), 'team'],
  ["the owner's OAuth access token of a disconnected app", 'refused', () => bearer(keys.oauthDisconnected), 'team'],
  ["the owner's OAuth access token for another resource", 'refused', () => bearer(keys.oauthOtherResource), 'team'],
  ['the site token of the site, unclaimed', 'site token', (w) => bearer(w.siteToken!), 'own'],
  ['the site token of another unclaimed site', 'other site token', (w) => bearer(w.siteToken!), 'other'],
  ['the site token after the claim', 'claimed site token', (w) => bearer(w.siteToken!), 'claimed'],
  ['the site token of the site, expired', 'expired site token', (w) => bearer(w.siteToken!), 'expired'],
  ['an API token of a non-member', 'non-member', () => bearer(outsider.token), 'team'],
  ['an API token of a viewer', 'viewer', () => bearer(viewer.token), 'team'],
  ['an API token of an editor', 'editor', () => bearer(editor.token), 'team'],
  ['an API token of an owner', 'owner', () => bearer(owner.token), 'team'],
  ['an OAuth access token of a non-member', 'non-member', () => bearer(keys.oauth.outsider), 'team'],
  ['an OAuth access token of a viewer', 'viewer', () => bearer(keys.oauth.viewer), 'team'],
  ['an OAuth access token of an editor', 'editor', () => bearer(keys.oauth.editor), 'team'],
  ['an OAuth access token of an owner', 'owner', () => bearer(keys.oauth.owner), 'team'],
];

/** Tool, arguments, and the REST endpoint whose operation it runs. */
const TOOLS: ReadonlyArray<[tool: string, args: (w: World) => Record<string, unknown>, twin: keyof typeof OPERATIONS]> = [
  ['get_account', () => ({}), 'GET /v1/me'],
  ['list_sites', () => ({}), 'GET /v1/sites'],
  ['get_site', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name'],
  ['deploy_site', () => ({ files: inline }), 'POST /v1/deploy (JSON, create)'],
  ['deploy_site', (w) => ({ site: w.site.name, base_revision: w.site.revision, files: inline }), 'POST /v1/deploy (JSON, update)'],
  [
    'deploy_site',
    (w) => ({ site: w.site.name, base_revision: w.site.revision, patch: true, files: [{ path: 'new.html', content: page }] }),
    'POST /v1/deploy (JSON, patch)',
  ],
  [
    'start_deploy',
    (w) => ({ site: w.site.name, base_revision: w.site.revision, files: [{ path: 'index.html', size: page.length, sha256: sha(page) }] }),
    'POST /v1/deploy/manifest (update)',
  ],
  ['get_deploy', () => ({ manifest: ownersManifest }), 'GET /v1/deploy/manifest/:id (the owner’s)'],
  ['new_claim_link', (w) => ({ site: w.site.name }), 'POST /v1/sites/:name/claim-link'],
  ['list_files', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name/files'],
  ['read_file', (w) => ({ site: w.site.name, path: 'index.html' }), 'GET /v1/sites/:name/files/<path>'],
  ['list_revisions', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name/revisions'],
  ['get_site_analytics', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name/analytics'],
  ['list_site_events', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name/events'],
  ['rollback_site', (w) => ({ site: w.site.name, revision: w.site.revision }), 'POST /v1/sites/:name/rollback'],
  ['promote_site', (w) => ({ site: w.site.name, revision: w.site.revision, base_revision: w.site.revision }), 'POST /v1/sites/:name/promote'],
  ['get_access', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name/access'],
  ['set_access', (w) => ({ site: w.site.name, mode: 'members' }), 'PUT /v1/sites/:name/access'],
  ['set_access', (w) => ({ site: w.site.name, previews: 'members' }), 'PUT /v1/sites/:name/access (previews)'],
  ['delete_revision', (w) => ({ site: w.site.name, revision: w.draft }), 'DELETE /v1/sites/:name/revisions/:id'],
  ['rename_site', (w) => ({ site: w.site.name, name: unique('renamed-') }), 'POST /v1/sites/:name/rename'],
  ['delete_site', (w) => ({ site: w.site.name }), 'DELETE /v1/sites/:name'],
  ['list_members', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name/members'],
  ['invite_member', (w) => ({ site: w.site.name, email: `${unique('invited')}@example.com`, role: 'editor' }), 'POST /v1/sites/:name/members'],
  ['remove_member', (w) => ({ site: w.site.name, email: viewer.account.email }), 'DELETE /v1/sites/:name/members/:email (step 1)'],
  ['remove_member', (w) => ({ site: w.site.name, email: viewer.account.email, confirm: w.confirm }), 'DELETE /v1/sites/:name/members/:email?confirm (step 2)'],
  ['list_domains', (w) => ({ site: w.site.name }), 'GET /v1/sites/:name/domains'],
  ['add_domain', (w) => ({ site: w.site.name, domain: `${unique('add')}.example.org` }), 'POST /v1/sites/:name/domains'],
  ['verify_domain', (w) => ({ site: w.site.name, domain: w.domain }), 'POST /v1/sites/:name/domains/:domain/verify'],
  ['remove_domain', (w) => ({ site: w.site.name, domain: w.domain }), 'DELETE /v1/sites/:name/domains/:domain'],
];

/** One `tools/call` on the MCP host, statelessly (no initialize first). */
async function callTool(tool: string, args: Record<string, unknown>, credential: Headers): Promise<Answered> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } });
  const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25', ...credential };
  return parse(await request({ port: server.port, host: 'mcp.localhost', method: 'POST', path: '/mcp', headers: headers as Record<string, string>, body }));
}

const mcpRows = TOOLS.flatMap(([tool, args, twin]) =>
  MCP_CREDENTIALS.map(([kind, answer, headers, target]) => {
    const operation = OPERATIONS[twin]!;
    const status = answer === 'refused' ? 401 : expected(operation, answer);
    return { label: `${tool} (as ${twin})`, kind, answer, status, headers, target, operation, tool, args };
  }),
);

describe('MCP: every credential × every tool', () => {
  it('has a row for each pair, and a tool for every tool the server lists', async () => {
    expect(mcpRows).toHaveLength(TOOLS.length * MCP_CREDENTIALS.length);
    const listed = await request({
      port: server.port,
      host: 'mcp.localhost',
      method: 'POST',
      path: '/mcp',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-11-25',
        authorization: `Bearer ${owner.token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const names = (JSON.parse(listed.text).result.tools as Array<{ name: string }>).map((t) => t.name);
    expect(new Set(TOOLS.map(([tool]) => tool))).toEqual(new Set(names));
  });

  it.each(mcpRows.map((row) => [row.label, row.kind, row.status, row] as const))('%s with %s → %i', async (_label, _kind, status, row) => {
    const w = await worldFor(status >= 400, `mcp ${row.label}`, row.operation, row.target);
    await row.operation.prepare?.(w);
    const before = snapshot(w);
    const res = await callTool(row.tool, row.args(w), row.headers(w));
    const after = snapshot(w);
    if (row.answer === 'refused') {
      expect(res.status, res.text.slice(0, 300)).toBe(401);
      expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer .*resource_metadata="/);
      expect(res.json.error).toMatchObject({ code: -32001, data: { code: 'unauthorized' } });
      expect(after).toEqual(before);
      return;
    }
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const result = res.json.result;
    if (status >= 400) {
      expect(result.isError, JSON.stringify(result).slice(0, 300)).toBe(true);
      expect(result.content[0].text).toMatch(new RegExp(`^${CODES[status]}: `));
      expect(after).toEqual(before);
      return;
    }
    expect(result.isError, JSON.stringify(result).slice(0, 300)).toBeFalsy();
    row.operation.effect?.(before, result.structuredContent, w);
    expect(after).toEqual(before);
    row.operation.check?.(result.structuredContent, w, row.answer as Column);
  });
});

// ---------------------------------------------------------------------------------------------
// Sites that are deleted or taken down. Deleted: 410 to whoever could see the site, 404 to
// everyone else (its existence stays hidden). Taken down for abuse: as live, except that its
// content and name are frozen, so what would change them answers 403.

// A manifest's status and abandonment answer its maker first (404 for anyone else), whatever its site's state.
const SITE_OPERATIONS = Object.keys(OPERATIONS).filter((name) => !/create|^GET \/v1\/sites$|\/v1\/me|approvals|manifest\/:id/.test(name));
// A site taken down for abuse cannot get a custom domain either, nor lose a revision (its content is evidence).
const FROZEN = /deploy|rollback|rename|promote|PUT|^POST \/v1\/sites\/:name\/domains$|revisions\/:id/;
const STATE_CALLERS: ReadonlyArray<[kind: string, answer: Column, headers: (w: World) => Headers, target: Target]> = [
  ['its site token', 'site token', (w) => bearer(w.siteToken!), 'own'],
  ['a non-member', 'non-member', () => bearer(outsider.token), 'team'],
  ['a viewer', 'viewer', () => bearer(viewer.token), 'team'],
  ['an editor', 'editor', () => bearer(editor.token), 'team'],
  ['an owner', 'owner', () => bearer(owner.token), 'team'],
];

function statusIn(state: 'deleted' | 'taken_down', name: string, answer: Column): number {
  const live = expected(OPERATIONS[name]!, answer);
  if (state === 'deleted') return answer === 'non-member' ? 404 : 410;
  return FROZEN.test(name) && live < 400 ? 403 : live;
}

const stateRows = (['deleted', 'taken_down'] as const).flatMap((state) =>
  SITE_OPERATIONS.flatMap((name) =>
    STATE_CALLERS.map(([kind, answer, headers, target]) => ({ state, name, kind, answer, headers, target, status: statusIn(state, name, answer) })),
  ),
);

describe('deleted and taken-down sites', () => {
  it.each(stateRows.map((row) => [row.state, row.name, row.kind, row.status, row] as const))(
    '%s site: %s by %s → %i',
    async (_state, _name, _kind, status, row) => {
      const operation = OPERATIONS[row.name]!;
      const w = await world(row.target);
      await operation.prepare?.(w);
      await server.store.setSiteState(w.site.name, row.state);
      const before = snapshot(w);
      const res = await send(operation.call(w), row.headers(w));
      const after = snapshot(w);
      if (status >= 400) {
        expectRefusal(res, status);
        expect(after).toEqual(before);
        return;
      }
      expect(res.status, res.text.slice(0, 300)).toBe(status);
      operation.effect?.(before, res.json, w);
      expect(after).toEqual(before);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Confusing one site for another: a credential for one site aimed at another by name, names
// that differ by case, dots or encoded characters, and ids of one site used on another. The
// victim's sites never change.

interface Cast {
  /** The owner's team site, and an account site of the non-member (B). */
  a: SiteRef;
  b: SiteRef;
  /** Two unclaimed anonymous sites with their tokens. */
  s1: SiteRef & { siteToken: string; claimToken: string };
  s2: SiteRef & { siteToken: string; claimToken: string };
}

async function cast(): Promise<Cast> {
  const a = await accountSite(server.store, owner, [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ]);
  const b = await accountSite(server.store, outsider, [[viewer, 'viewer']]);
  return { a, b, s1: await anonymous(), s2: await anonymous() };
}

const unchanged = (c: Cast) => [c.a, c.b, c.s1, c.s2].map((site) => ({ ...server.store.getSiteById(site.id), members: server.store.listMembers(site.id) }));
const get = (path: string, token?: string) => send({ path }, token === undefined ? {} : bearer(token));
const json = (path: string, body: unknown, token: string) => send({ method: 'POST', path, json: body }, bearer(token));

interface Confusion {
  attack: string;
  /** Done before the "before" picture (a claim the row relies on). */
  setup?(c: Cast): Promise<void>;
  run(c: Cast): Promise<Answered>;
  status: number;
  /** The caller's own site, when the row changes it. */
  changes?(c: Cast): SiteRef;
}

const manifestOf = (site: SiteRef, token: string) =>
  json('/v1/deploy/manifest', { site: site.name, base_revision: site.revision, files: [{ path: 'index.html', size: page.length, sha256: sha(page) }] }, token);

const CONFUSIONS: readonly Confusion[] = [
  { attack: 'a site token naming another unclaimed site', run: (c) => get(`/v1/sites/${c.s2.name}/files`, c.s1.siteToken), status: 404 },
  { attack: 'a site token naming an account site', run: (c) => get(`/v1/sites/${c.a.name}`, c.s1.siteToken), status: 404 },
  {
    attack: 'a site token, another site in the JSON body and its own in the query (they disagree: refused)',
    run: (c) => json(`/v1/deploy?site=${c.s1.name}`, { site: c.s2.name, base_revision: c.s2.revision, files: inline }, c.s1.siteToken),
    status: 400,
  },
  {
    attack: 'a site token, its own site in the JSON body and another in the query (they disagree: refused)',
    run: (c) => json(`/v1/deploy?site=${c.s2.name}`, { site: c.s1.name, base_revision: c.s1.revision, files: inline }, c.s1.siteToken),
    status: 400,
  },
  {
    attack: 'a site token, ?site= twice with another site first (the first counts)',
    run: (c) =>
      send(
        {
          method: 'POST',
          path: `/v1/deploy?site=${c.s2.name}&site=${c.s1.name}`,
          raw: tgzBytes([['index.html', page]]),
          headers: { 'x-base-revision': c.s2.revision },
        },
        bearer(c.s1.siteToken),
      ),
    status: 404,
  },
  {
    attack: 'a site token as an access_token query parameter (never read)',
    run: (c) => get(`/v1/sites/${c.s1.name}?access_token=${c.s1.siteToken}`),
    status: 401,
  },
  { attack: "the owner's token, the name in upper case", run: (c) => get(`/v1/sites/${c.a.name.toUpperCase()}`, owner.token), status: 404 },
  { attack: "the owner's token, the name with a trailing dot", run: (c) => get(`/v1/sites/${c.a.name}.`, owner.token), status: 404 },
  { attack: "the owner's token, the name with an encoded trailing dot (%2e)", run: (c) => get(`/v1/sites/${c.a.name}%2e`, owner.token), status: 404 },
  { attack: "the owner's token, an encoded slash in the name (%2F)", run: (c) => get(`/v1/sites/${c.a.name}%2Ffiles`, owner.token), status: 404 },
  { attack: "the owner's token, a%2Fb", run: () => get('/v1/sites/a%2Fb', owner.token), status: 404 },
  { attack: "the owner's token, its own site then ..%2F to another", run: (c) => get(`/v1/sites/${c.a.name}%2F..%2F${c.b.name}`, owner.token), status: 404 },
  { attack: "the owner's token, .. as the name", run: () => get('/v1/sites/%2e%2e', owner.token), status: 404 },
  { attack: "the owner's token, dot segments in the path", run: (c) => get(`/v1/sites/${c.b.name}/../${c.a.name}`, owner.token), status: 404 },
  { attack: "the owner's token, the name with an encoded NUL", run: (c) => get(`/v1/sites/${c.a.name}%00`, owner.token), status: 404 },
  { attack: "the owner's token, the name with an encoded space", run: (c) => get(`/v1/sites/${c.a.name}%20`, owner.token), status: 404 },
  { attack: "the owner's token, broken percent-encoding", run: (c) => get(`/v1/sites/${c.a.name}%E0%A4%A`, owner.token), status: 400 },
  { attack: "the owner's token, a site that does not exist", run: () => get('/v1/sites/no-such-site-here', owner.token), status: 404 },
  { attack: 'no credential, a site that does not exist (401 before 404)', run: () => get('/v1/sites/no-such-site-here'), status: 401 },
  {
    attack: 'the owner of A rolling A back to a revision of B',
    run: (c) => json(`/v1/sites/${c.a.name}/rollback`, { revision: c.b.revision }, owner.token),
    status: 404,
  },
  {
    attack: "the owner of A deploying to A on B's revision",
    run: (c) => json('/v1/deploy', { site: c.a.name, base_revision: c.b.revision, files: inline }, owner.token),
    status: 409,
  },
  {
    attack: "the owner of A removing A's viewer from B",
    run: (c) => send({ method: 'DELETE', path: `/v1/sites/${c.b.name}/members/${encodeURIComponent(viewer.account.email)}` }, bearer(owner.token)),
    status: 404,
  },
  {
    attack: "the site token of a site claimed by B's owner, on B",
    setup: async (c) => {
      expect((await server.store.claimSite(hashToken(c.s1.claimToken), outsider.account.id)).ok).toBe(true);
    },
    run: (c) => get(`/v1/sites/${c.b.name}`, c.s1.siteToken),
    status: 404,
  },
  {
    attack: 'a manifest made with one site token, finished with another',
    run: async (c) => json(`/v1/deploy?manifest=${(await manifestOf(c.s1, c.s1.siteToken)).json.manifest}`, { files: inline }, c.s2.siteToken),
    status: 404,
  },
  {
    attack: "a manifest made by A's owner, finished by A's editor",
    run: async (c) => json(`/v1/deploy?manifest=${(await manifestOf(c.a, owner.token)).json.manifest}`, { files: inline }, editor.token),
    status: 404,
  },
  {
    attack: "a site token on MCP, reading another site's file",
    run: async (c) => {
      const res = await callTool('read_file', { site: c.s2.name, path: 'index.html' }, bearer(c.s1.siteToken));
      expect(res.json.result.content[0].text).toMatch(/^not_found: /);
      return { ...res, status: 404, json: { error: { code: 'not_found', message: res.json.result.content[0].text } } };
    },
    status: 404,
  },
];

describe('one site for another', () => {
  it.each(CONFUSIONS.map((row) => [row.attack, row.status, row] as const))('%s → %i', async (_attack, status, row) => {
    const c = await cast();
    await row.setup?.(c);
    const before = unchanged(c);
    const res = await row.run(c);
    if (status >= 400) expectRefusal(res, status);
    else expect(res.status, res.text.slice(0, 300)).toBe(status);
    const after = unchanged(c);
    // Only the caller's own site may change, and only when the row says so.
    const changed = row.changes?.(c);
    after.forEach((site, i) => {
      if (site.id === changed?.id) expect(site.liveRevision).toBe(res.json.revision.id);
      else expect(site).toEqual(before[i]);
    });
  });

  it("treats a renamed site's former names as aliases of it for its members, and hides them from others", async () => {
    const c = await cast();
    const renamed = unique('renamed-');
    expect((await json(`/v1/sites/${c.a.name}/rename`, { name: renamed }, owner.token)).status).toBe(200);
    const former = await send({ path: `/v1/sites/${c.a.name}` }, bearer(viewer.token));
    expect(former.status).toBe(200);
    expect(former.json.name).toBe(renamed);
    expectRefusal(await send({ path: `/v1/sites/${c.a.name}` }, bearer(outsider.token)), 404);
    expectRefusal(await send({ path: `/v1/sites/${c.a.name}/rename`, method: 'POST', json: { name: unique('again-') } }, bearer(viewer.token)), 403);
    // The former name is never given to another site.
    expectRefusal(await json(`/v1/sites/${c.b.name}/rename`, { name: c.a.name }, outsider.token), 400);
    expect(server.store.getSiteById(c.b.id)!.name).toBe(c.b.name);
  });
});

// ---------------------------------------------------------------------------------------------

describe('routing answers in the error shape, whatever the credential', () => {
  it.each([
    ['PUT', '/v1/sites/x', 405],
    ['POST', '/v1/me', 405],
    ['GET', '/v1/nope', 404],
    ['GET', '/v1/sites/x/unknown', 404],
  ])('%s %s → %i', async (method, path, status) => {
    const res = await send({ method, path }, bearer(owner.token));
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(status === 405 ? 'method_not_allowed' : 'not_found');
  });
});
