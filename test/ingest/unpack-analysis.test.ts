// A whole small site is analysed in its unpack task (rules files compiled, links checked) while
// its blobs are flushed: the answer must be the one a separate analysis task gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteRulesLimits, UnpackTask } from '../../src/ingest/index.js';
import type { TarEntrySpec } from '../fixtures/archives.js';
import { createIngestRig, MB, type IngestRig } from '../fixtures/ingest-pool.js';

let rig: IngestRig;
beforeAll(() => {
  rig = createIngestRig('plinth-unpack-analysis-');
});
afterAll(() => rig.close());

const LIMITS: SiteRulesLimits = {
  redirects: { maxEntries: 2000, maxLineChars: 1000, maxFileBytes: 1 << 20 },
  headers: { maxEntries: 100, maxLineChars: 2000, maxFileBytes: 1 << 20 },
  maxWarnings: 50,
};

const SITE: TarEntrySpec[] = [
  { name: 'index.html', content: '<a href="/old">old</a>\n<img src="missing.png">\n<link rel="stylesheet" href="/css/site.css">' },
  { name: 'css/site.css', content: 'body{background:url(../img/bg.png)}' },
  { name: '_redirects', content: '/old /new 301\n' },
];

const unpack = (entries: TarEntrySpec[], options: Partial<UnpackTask> = {}) => rig.unpackEntries(entries, options);

describe('the analysis of a whole small site in its unpack task', () => {
  it('answers what a separate analysis task answers', async () => {
    const result = await unpack(SITE, { analyze: { limits: LIMITS, threads: 2 } });
    const files = result.files.map(({ path, sha256, size, type }) => ({ path, sha256, size, type })).sort((a, b) => (a.path < b.path ? -1 : 1));
    const separate = await rig.pool.analyze({ dataDir: rig.dataDir, files, limits: LIMITS });
    expect(result.analysis).toEqual(separate);
    expect(result.analysis).toMatchObject({
      ok: true,
      extras: {
        warningsTotal: 2,
        warnings: [
          { file: 'css/site.css', line: 1, ref: '../img/bg.png', kind: 'broken_link' },
          { file: 'index.html', line: 2, ref: 'missing.png', kind: 'broken_link' },
        ],
      },
    });
  });

  it('is there for a redeploy whose blobs all exist (nothing to flush)', async () => {
    await unpack(SITE, { analyze: { limits: LIMITS, threads: 2 } });
    const again = await unpack(SITE, { analyze: { limits: LIMITS, threads: 2 } });
    expect(again.analysis).toMatchObject({ ok: true, extras: { warningsTotal: 2 } });
  });

  it('carries a refused rules file as the analysis task would, the unpack itself accepted', async () => {
    const result = await unpack([...SITE.slice(0, 2), { name: '_headers', content: '/*\n  Set-Cookie: a=1\n' }], { analyze: { limits: LIMITS, threads: 2 } });
    expect(result.analysis).toMatchObject({ ok: false, error: { code: 'bad_request', details: { file: '_headers', line: 2 } } });
  });

  it('is left to the pool for a part of a site, a body not asking for it, or pages one thread should not check alone', async () => {
    expect((await unpack(SITE, { partial: true, analyze: { limits: LIMITS, threads: 2 } })).analysis).toBeUndefined();
    expect((await unpack(SITE)).analysis).toBeUndefined();
    const large: TarEntrySpec[] = [
      { name: 'index.html', content: '<p>home</p>' },
      // Pages of 2.7 MB: two shares of a link check for two threads (one for each MB, at least).
      { name: 'a.html', content: `<p>${'x'.repeat(0.9 * MB)}</p>` },
      { name: 'b.html', content: `<p>${'y'.repeat(0.9 * MB)}</p>` },
      { name: 'c.html', content: `<p>${'z'.repeat(0.9 * MB)}</p>` },
    ];
    expect((await unpack(large, { analyze: { limits: LIMITS, threads: 2 } })).analysis).toBeUndefined();
    expect((await unpack(large, { analyze: { limits: LIMITS, threads: 1 } })).analysis).toMatchObject({ ok: true });
  });
});
