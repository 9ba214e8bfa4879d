// Who may use a deploy manifest (src/sites/manifest.ts). A manifest's id travels in URLs and
// logs, so the id must not be enough: a manifest made with a credential belongs to that
// credential, and one made without (a new anonymous site) to whoever holds the secret its first
// answer carried. Anyone else, anonymous or not, meets a manifest that does not exist (404), for
// reading it, sending it parts, finishing it and giving it up, and changes nothing.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { callApi, type ApiCall, type ApiResponse } from '../helpers/http.js';
import { useTestServer } from '../helpers/fixtures.js';

const server = useTestServer();

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const PAGE = '<!doctype html><h1>uploaded in parts</h1>\n';
const ABOUT = '<!doctype html><h1>about</h1>\n';
const FILES = [
  { path: 'index.html', size: Buffer.byteLength(PAGE), sha256: sha(PAGE) },
  { path: 'about.html', size: Buffer.byteLength(ABOUT), sha256: sha(ABOUT) },
];

const call = (request: ApiCall): Promise<ApiResponse> => callApi(server.port, request);
const withSecret = (secret: string | undefined): Record<string, string> => (secret === undefined ? {} : { 'x-manifest-secret': secret });

/** An anonymous manifest for a new site: its id and secret. */
async function anonymousManifest(): Promise<{ id: string; secret: string }> {
  const made = await call({ method: 'POST', path: '/v1/deploy/manifest', body: { files: FILES } });
  expect(made.status, made.text).toBe(201);
  expect(made.json.manifest).toMatch(/^mf_/);
  expect(made.json.manifest_secret).toMatch(/^ms_[A-Za-z0-9_-]{32}$/);
  expect(made.json.agent_message).toContain('X-Manifest-Secret');
  return { id: made.json.manifest, secret: made.json.manifest_secret };
}

// Every use of a manifest, by someone sending `headers` (and `token`).
const USES: Array<[use: string, run: (id: string, headers: Record<string, string>, token?: string) => Promise<ApiResponse>]> = [
  ['read it', (id, headers, token) => call({ path: `/v1/deploy/manifest/${id}`, headers, token })],
  [
    'send it a part (archive)',
    (id, headers, token) => call({ method: 'POST', path: `/v1/deploy?manifest=${id}`, headers, token, raw: tgzBytes([['about.html', ABOUT]]) }),
  ],
  [
    'send it a part (JSON)',
    (id, headers, token) =>
      call({ method: 'POST', path: `/v1/deploy?manifest=${id}`, headers, token, body: { files: [{ path: 'about.html', content: ABOUT }] } }),
  ],
  [
    'finish it with every content',
    (id, headers, token) =>
      call({
        method: 'POST',
        path: `/v1/deploy?manifest=${id}`,
        headers,
        token,
        raw: tgzBytes([
          ['index.html', PAGE],
          ['about.html', ABOUT],
        ]),
      }),
  ],
  ['finish it with an empty body', (id, headers, token) => call({ method: 'POST', path: `/v1/deploy?manifest=${id}`, headers, token, raw: '' })],
  ['give it up', (id, headers, token) => call({ method: 'DELETE', path: `/v1/deploy/manifest/${id}`, headers, token })],
];

// What a second anonymous client, who learnt the id, might send along with it.
const NOT_THE_SECRET: Array<[who: string, secret: (own: { secret: string }, other: { secret: string }) => string | undefined]> = [
  ['no secret', () => undefined],
  ['an empty secret', () => ''],
  ['another manifest’s secret', (_own, other) => other.secret],
  ['a made-up secret', () => `ms_${'A'.repeat(32)}`],
  ['the secret with one character changed', (own) => `${own.secret.slice(0, -1)}${own.secret.endsWith('A') ? 'B' : 'A'}`],
  ['the secret’s sha256', (own) => sha(own.secret)],
  ['the secret without its prefix', (own) => own.secret.slice(3)],
  ['the secret in other case', (own) => own.secret.toUpperCase()],
  ['the manifest id as the secret', () => undefined],
];

/** What the store holds of a manifest: it, its parts, and the number of sites. */
function stateOf(id: string): string {
  const record = server.store.getManifest(id);
  return JSON.stringify({ record, parts: [...server.store.listManifestParts(id)], sites: server.store.listSiteIds().length });
}

describe('an anonymous manifest is its maker’s alone', () => {
  it.each(USES.flatMap(([use, run]) => NOT_THE_SECRET.map(([who, secret]) => [use, who, run, secret] as const)))(
    'another anonymous client cannot %s with %s: 404, as for no manifest, and nothing changes',
    async (_use, who, run, secretOf) => {
      const own = await anonymousManifest();
      const other = await anonymousManifest();
      const secret = who === 'the manifest id as the secret' ? own.id : secretOf(own, other);
      const before = stateOf(own.id);
      const answer = await run(own.id, withSecret(secret));
      expect(answer.status, answer.text).toBe(404);
      // The same answer as for an id that never existed: the id's existence is not revealed.
      const none = await run(`mf_${'x'.repeat(24)}`, withSecret(secret));
      expect(answer.json.error).toEqual(none.json.error);
      expect(answer.json.agent_message).toBe(none.json.agent_message);
      expect(stateOf(own.id)).toBe(before);
      // Its maker still has it, whole.
      const mine = await call({ path: `/v1/deploy/manifest/${own.id}`, headers: withSecret(own.secret) });
      expect(mine.status, mine.text).toBe(200);
      expect(mine.json.received).toBe(0);
    },
  );

  it('a credential does not open someone’s anonymous manifest either', async () => {
    const own = await anonymousManifest();
    const site = await call({ method: 'POST', path: '/v1/deploy', raw: tgzBytes([['index.html', PAGE]]) });
    expect(site.status).toBe(201);
    for (const [use, run] of USES) {
      expect((await run(own.id, withSecret(own.secret), site.json.site_token)).status, use).toBe(404);
    }
  });

  it('its maker reads it, sends parts and publishes with the secret; the secret is shown once and stored as a hash', async () => {
    const own = await anonymousManifest();
    const status = await call({ path: `/v1/deploy/manifest/${own.id}`, headers: withSecret(own.secret) });
    expect(status.status).toBe(200);
    expect(status.json.manifest_secret).toBeUndefined();
    expect(JSON.stringify(server.store.getManifest(own.id))).not.toContain(own.secret.slice(3));

    const part = await call({ method: 'POST', path: `/v1/deploy?manifest=${own.id}`, headers: withSecret(own.secret), raw: tgzBytes([['about.html', ABOUT]]) });
    expect(part.status, part.text).toBe(202);
    expect(part.json.manifest_secret).toBeUndefined();
    const done = await call({ method: 'POST', path: `/v1/deploy?manifest=${own.id}`, headers: withSecret(own.secret), raw: tgzBytes([['index.html', PAGE]]) });
    expect(done.status, done.text).toBe(201);
    expect(done.json.site_token).toMatch(/^st_/);
    expect(done.json.revision.files).toBe(2);
  });

  it('its maker gives it up with the secret', async () => {
    const own = await anonymousManifest();
    const gone = await call({ method: 'DELETE', path: `/v1/deploy/manifest/${own.id}`, headers: withSecret(own.secret) });
    expect(gone.status, gone.text).toBe(200);
    expect(server.store.getManifest(own.id)).toBeUndefined();
  });

  it('an anonymous manifest stored without a secret (made before secrets) opens for no one', async () => {
    const own = await anonymousManifest();
    const { secretHash: _dropped, ...record } = server.store.getManifest(own.id)!;
    await server.store.putManifest(own.id, record);
    for (const secret of [undefined, own.secret]) {
      expect((await call({ path: `/v1/deploy/manifest/${own.id}`, headers: withSecret(secret) })).status).toBe(404);
    }
  });
});

describe('a manifest made with a site token stays that token’s', () => {
  it.each(USES)('an anonymous client cannot %s, even with a secret of its own', async (_use, run) => {
    const created = await call({ method: 'POST', path: '/v1/deploy', raw: tgzBytes([['index.html', PAGE]]) });
    expect(created.status).toBe(201);
    const token = created.json.site_token as string;
    const made = await call({
      method: 'POST',
      path: '/v1/deploy/manifest',
      token,
      body: { site: created.json.site.name, base_revision: created.json.revision.id, files: FILES },
    });
    expect(made.status, made.text).toBe(201);
    // No secret for a manifest a credential binds.
    expect(made.json.manifest_secret).toBeUndefined();
    const other = await anonymousManifest();
    const before = stateOf(made.json.manifest);
    for (const secret of [undefined, other.secret]) {
      expect((await run(made.json.manifest, withSecret(secret))).status).toBe(404);
    }
    expect(stateOf(made.json.manifest)).toBe(before);
    expect((await call({ path: `/v1/deploy/manifest/${made.json.manifest}`, token })).status).toBe(200);
  });
});
