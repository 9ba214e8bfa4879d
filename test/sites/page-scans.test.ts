// A large site's pages are read for the link check on another ingest thread while its body is
// unpacked; a small site's are not (its unpack task checks its links itself).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredPage } from '../../src/ingest/index.js';
import { startPageScans } from '../../src/sites/page-scans.js';
import { tarFromEntries } from '../fixtures/archives.js';
import { createIngestRig, expectOk, MB, type IngestRig } from '../fixtures/ingest-pool.js';

let rig: IngestRig;
let pages: StoredPage[];
beforeAll(async () => {
  rig = createIngestRig('plinth-page-scans-');
  const site = [
    { name: 'index.html', content: '<a href="/gone.html">gone</a>' },
    { name: 'a.html', content: `<p>${'x'.repeat(0.9 * MB)}</p><img src="/a.png">` },
    { name: 'b.html', content: `<p>${'y'.repeat(0.9 * MB)}</p><img src="/b.png">` },
    { name: 'c.html', content: `<p>${'z'.repeat(0.9 * MB)}</p><img src="/c.png">` },
    { name: 'site.css', content: 'a{b:url(/d.png)}' },
  ];
  const result = expectOk(await rig.unpack(await tarFromEntries(rig.file('site.tar'), site)));
  const byPath = new Map(result.files.map((file) => [file.path, file]));
  pages = site.map(({ name }) => ({ sha256: byPath.get(name)!.sha256, size: byPath.get(name)!.size, html: name.endsWith('.html') }));
});
afterAll(() => rig.close());

describe('reading pages while a body is unpacked', () => {
  it('reads them once two megabytes of pages were told of, in batches, and gives what was read', async () => {
    const scans = startPageScans(rig.pool, rig.dataDir);
    for (const page of pages) scans.port.postMessage(page);
    // Let the messages arrive, as they do while an unpack runs.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const known = await scans.finish();
    // The three large pages and the home page before them; the style sheet came after, alone,
    // and is left to the analysis.
    expect(Object.keys(known ?? {}).sort()).toEqual(
      pages
        .filter((page) => page.html)
        .map((page) => `h${page.sha256}`)
        .sort(),
    );
    expect(known?.[`h${pages[1]!.sha256}`]).toEqual({ refs: [{ ref: '/a.png', line: 1 }] });
  });

  it('reads nothing of a small site', async () => {
    const scans = startPageScans(rig.pool, rig.dataDir);
    scans.port.postMessage(pages[0]);
    scans.port.postMessage(pages[4]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await scans.finish()).toBeUndefined();
  });
});
