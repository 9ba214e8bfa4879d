import { randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { publishSite } from '../helpers/sites.js';

// Regressions found by the soak and the scale bench: what a thread caches stays within bounds.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const get = (site: string, path = '/') => request({ port: server!.port, host: `${site}.sites.localhost`, path });

it('drops the cached bodies of a revision once the site moves on', async () => {
  server = await startTestServer();
  const first = randomBytes(2 * 1024 * 1024);
  const { revision } = await publishSite(server.store, 'moving', { 'index.html': '<p>one</p>', 'video.mp4': first });
  expect((await get('moving', '/video.mp4')).body.equals(first)).toBe(true);
  expect(server.stats().cache.bodyBytes).toBeGreaterThanOrEqual(first.byteLength);

  const files = new Map([['index.html', await server.store.blobs.putFile(Buffer.from('<p>two</p>'), 'text/html; charset=utf-8', { compress: false })]]);
  expect((await server.store.commitRevision({ site: 'moving', baseRevision: revision, files, kind: 'deploy', createdBy: 'admin' })).ok).toBe(true);
  expect((await get('moving')).text).toContain('two');
  expect(server.stats().cache.bodyBytes).toBeLessThan(first.byteLength);
});

it('keeps site records and resolved URLs within PLINTH_SITE_CACHE_MB, however many sites and paths are asked for', async () => {
  server = await startTestServer({ PLINTH_SITE_CACHE_MB: '1' });
  const names = Array.from({ length: 40 }, (_, i) => `many-${i}`);
  for (const name of names) await publishSite(server.store, name, { 'index.html': `<p>${name}</p>` });
  const long = 'p'.repeat(900);
  for (let i = 0; i < 1200; i++) {
    const name = names[i % names.length]!;
    const res = await get(name, `/${i}-${long}.png`);
    expect(res.status).toBe(404);
  }
  const { cache } = server.stats();
  expect(cache.siteBytes).toBeLessThanOrEqual(1024 * 1024);
  // The budget was reached and trimmed, not merely unused: ~2 KB per path over 1,200 paths.
  expect(cache.siteBytes).toBeGreaterThan(512 * 1024);
  for (const name of names.slice(0, 5)) expect((await get(name)).text).toContain(name);
});

it('builds a large badged page in a worker, once for visitors asking at the same time, and a small one at once', async () => {
  server = await startTestServer();
  // About 300 KB of markup: too long to parse while serving.
  const large = `<!doctype html><title>big</title><body>${'<p>lorem ipsum <b>dolor</b> sit amet</p>\n'.repeat(7000)}</body>`;
  await publishSite(server.store, 'free-big', { 'index.html': large, 'small.html': '<body><p>small</p></body>' }, { plan: 'free' });

  const answers = await Promise.all(Array.from({ length: 5 }, () => get('free-big')));
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    // Once: the pill in body's shadow root and its light copy.
    expect(answer.text.match(/data-plinth-badge/g)?.length).toBe(2);
    expect(answer.text.match(/<template shadowrootmode/g)?.length).toBe(1);
    expect(answer.text.indexOf('data-plinth-badge')).toBeLessThan(answer.text.lastIndexOf('</body>'));
  }
  expect(new Set(answers.map((answer) => answer.headers.etag)).size).toBe(1);
  expect(server.stats().cache.badgedPagesBuiltElsewhere).toBe(1);

  const small = await get('free-big', '/small.html');
  expect(small.text).toContain('data-plinth-badge');
  expect(server.stats().cache.badgedPagesBuiltElsewhere).toBe(1);
  // Built once: later visits come from the cache.
  expect((await get('free-big')).headers.etag).toBe(answers[0]!.headers.etag);
  expect(server.stats().cache.badgedPagesBuiltElsewhere).toBe(1);
});
