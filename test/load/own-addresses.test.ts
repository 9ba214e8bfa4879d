import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sites.js';
import { corpusHandler, localCorpus, plinthLoad, readReport, startLoopback, writeJson, type LoopbackServer } from './load-cli.js';

/**
 * `plinth load run` without --connect or --compare sends each request to its own site's address.
 * Its one target is all of those addresses, so the summary and the JSON name it by the sites'
 * domain (`*.sites.localhost:PORT`), not by the first site of the corpus, which read as if every
 * request had gone to that one site.
 */
const dir = tempDir('plinth-load-own-');
let server: LoopbackServer;
let corpusFile: string;

beforeAll(async () => {
  const template = localCorpus(5);
  server = await startLoopback(corpusHandler(template));
  // The same corpus, its sites at the stand-in's port: *.localhost names resolve to loopback.
  const sites = template.sites.map((site) => ({
    ...site,
    url: `http://${site.name}.sites.localhost:${server.port}`,
    host: `${site.name}.sites.localhost:${server.port}`,
  }));
  corpusFile = writeJson(dir, 'corpus.json', { ...template, sites });
});

afterAll(async () => {
  await server?.close();
});

describe('plinth load run on the sites own addresses', () => {
  it('names its one target by the sites domain', async () => {
    const json = join(dir, 'result.json');
    const result = await plinthLoad(['run', '--corpus', corpusFile, '--json', json, '--duration', '500ms', '--connections', '2']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = readReport(readFileSync(json, 'utf8'));
    const label = `*.sites.localhost:${server.port}`;
    expect(report.targets.map((target) => target.target)).toEqual([label]);
    expect(new Set(report.rounds.map((round) => round.target))).toEqual(new Set([label]));
    expect(result.stdout).toContain(`${label}: `);
    expect(result.stdout).not.toContain('load-0.sites.localhost');
  });
});
