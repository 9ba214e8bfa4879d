import { beforeAll, describe, expect, it } from 'vitest';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request } from '../helpers/http.js';
import { accountSite, accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';

/** Site rules where they meet previews and private sites: each revision keeps its own rules, and a protected site's rule answers stay private. */

let owner: TestAccount;

const visit = (label: string, path = '/', headers: Record<string, string> = {}) =>
  request({ port: server.port, host: `${label}.sites.localhost`, path, headers });

const server = useTestServer();

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

describe('site rules with previews and access', () => {
  it("serves a draft's preview with the draft's own _redirects and _headers, the live site with its own", async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>one</h1>' } });
    const draft = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody(
        [
          ['index.html', '<h1>two</h1>'],
          ['new.html', '<h1>new</h1>'],
          ['_redirects', '/old /new 301\n'],
          ['_headers', '/*\n  X-Draft: yes\n'],
        ],
        { site: site.name, base_revision: site.revision, publish: false },
      ),
    });
    expect(draft.status).toBe(201);
    const moved = await visit(`2--${site.name}`, '/old');
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe('/new');
    const page = await visit(`2--${site.name}`, '/');
    expect(page.headers['x-draft']).toBe('yes');
    expect(page.headers['x-robots-tag']).toBe('noindex');
    // The live revision has no rules: no redirect, no header.
    const liveOld = await visit(site.name, '/old');
    expect(liveOld.status).toBe(200); // the single-page-app fallback: index.html
    expect(liveOld.text).toContain('one');
    expect((await visit(site.name, '/')).headers['x-draft']).toBeUndefined();
  });

  it("keeps a password site's redirects, gone pages and folder redirects private and asks for the password first", async () => {
    const site = await accountSite(server.store, owner);
    const deployed = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody(
        [
          ['index.html', '<h1>secret</h1>'],
          ['docs/index.html', '<h1>docs</h1>'],
          ['_redirects', '/old /docs/ 302\n/gone /x 410\n'],
        ],
        { site: site.name, base_revision: site.revision },
      ),
    });
    expect(deployed.status).toBe(201);
    const set = await api(server, {
      method: 'PUT',
      path: `/v1/sites/${site.name}/access`,
      token: owner.token,
      body: { mode: 'password', password: 'correct horse' },
    });
    expect(set.status).toBe(200);
    // Without the password nothing of the rules shows.
    for (const path of ['/old', '/gone', '/docs']) {
      const res = await visit(site.name, path);
      expect(res.status, path).toBe(401);
      expect(res.headers.location, path).toBeUndefined();
    }
    const basic = { authorization: `Basic ${Buffer.from('any:correct horse').toString('base64')}` };
    const old = await visit(site.name, '/old', basic);
    expect(old.status).toBe(302);
    expect(old.headers['cache-control']).toBe('private, no-store');
    const folder = await visit(site.name, '/docs', basic);
    expect(folder.status).toBe(301);
    expect(folder.headers['cache-control']).toBe('private, no-store');
    const gone = await visit(site.name, '/gone', basic);
    expect(gone.status).toBe(410);
    expect(gone.headers['cache-control']).toBe('private, no-store');
    expect(gone.headers['x-robots-tag']).toBe('noindex');
  });
});
