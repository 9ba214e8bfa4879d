import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { siteFiles, siteSeed, type Corpus } from '../../packages/cli/src/load/corpus.js';
import { tempDir } from '../helpers/sites.js';
import { plinthLoad, startLoopback, type LoopbackServer } from './load-cli.js';

/**
 * `plinth load prepare` against a busy deployment: a deploy whose answer is lost (here the
 * connection is closed before any answer, as a proxy that gave up does) is sent again with the
 * same Idempotency-Key; while the first is still running that is refused with 409 naming the key,
 * so it is asked again, and the API's replay of the first answer completes the corpus, with no
 * site published twice. A stand-in API on loopback plays the deployment and keeps the deploys it
 * took by key, as Plinth does (docs/sites-api.md, "Retries: Idempotency-Key").
 */
const dir = tempDir('plinth-load-prepare-');
const SEED = 7;
const SCALE = 0.005;
/** Site `i`'s files as prepare's deploy of it carries them (one deploy at this scale): the stand-in names the site after them. */
const filesOf = (files: Array<{ path: string; content: string }>): string => files.map((file) => `${file.path}:${file.content}`).join('|');
const sitesFiles = [0, 1, 2].map((i) =>
  filesOf(siteFiles(siteSeed(SEED, i), SCALE).map((file) => ({ path: file.path, content: file.bytes.toString('base64') }))),
);
let api: LoopbackServer | undefined;

afterAll(async () => {
  await api?.close();
});

describe('plinth load prepare', () => {
  it('sends a deploy whose answer was lost again with its Idempotency-Key, and publishes each site once', async () => {
    const published = new Map<string, { name: string; revision: string }>();
    const keysSeen: string[] = [];
    let sites = 0;
    api = await startLoopback((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (req.method === 'GET' && req.url === '/v1/me') return json(200, { plan: 'company', sites_used: 0, sites_limit: 1000 });
        if (req.method !== 'POST' || req.url !== '/v1/deploy') return json(404, { error: { code: 'not_found', message: 'no such route' } });
        const key = req.headers['idempotency-key'];
        if (typeof key !== 'string') return json(400, { error: { code: 'bad_request', message: 'this stand-in wants a key' } });
        keysSeen.push(key);
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { site?: string; files: Array<{ path: string; content: string }> };
        const sends = keysSeen.filter((seen) => seen === key).length;
        if (sends === 2)
          return json(409, {
            error: { code: 'conflict', message: 'still running', details: { idempotency_key: key } },
          });
        const kept = published.get(key);
        if (kept) {
          res.setHeader('idempotent-replayed', 'true');
          return json(201, { site: { name: kept.name, url: `http://${kept.name}.sites.localhost:1` }, revision: { id: kept.revision } });
        }
        // The deploys run side by side and may arrive in any order: site i is named site-(i+1).
        if (body.site === undefined) sites++;
        const name = body.site ?? `site-${sitesFiles.indexOf(filesOf(body.files)) + 1}`;
        const made = { name, revision: `rev_${keysSeen.length}` };
        published.set(key, made);
        // The deploy is done, but its answer never arrives.
        req.socket.destroy();
      });
    });
    const corpusFile = join(dir, 'corpus.json');
    const prepared = await plinthLoad([
      'prepare',
      '--api',
      `http://api.localhost:${api.port}`,
      '--token',
      'pl_stand_in',
      '--sites',
      '3',
      '--scale',
      String(SCALE),
      '--seed',
      String(SEED),
      // Each site waits out the command's pauses between its three sends (about 3 s): the three
      // sites wait at the same time.
      '--concurrency',
      '3',
      '--corpus',
      corpusFile,
    ]);
    expect(prepared.stderr).toBe('');
    expect(prepared.code).toBe(0);
    expect(prepared.stdout).toMatch(/^published 3 sites/);
    // Three sites, three deploys, each sent three times with the same key; no fourth site.
    expect(sites).toBe(3);
    expect(new Set(keysSeen).size).toBe(3);
    expect(keysSeen).toHaveLength(9);
    const corpus = JSON.parse(readFileSync(corpusFile, 'utf8')) as Corpus;
    expect(corpus.sites.map((site) => site.name)).toEqual(['site-1', 'site-2', 'site-3']);
  }, 60_000);
});
