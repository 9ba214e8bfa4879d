import { createHash, randomBytes } from 'node:crypto';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken } from './api-helpers.js';
import { tarBytes, tgzBytes, zipBytes } from '../helpers/archive-bytes.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request, type TestResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import type { TestServer } from '../helpers/server.js';

// Deploy bodies of known size are received into memory within a per-thread budget (here 2 MB,
// at most 1 MB a body), and spooled to disk otherwise. The server's counters tell which.
const server = useTestServer({ PLINTH_MEMORY_BODY_MB: '2', PLINTH_MEMORY_BODY_MAX_MB: '1' });
const spoolingServer = useTestServer({ PLINTH_MEMORY_BODY_MB: '0' });
// Bodies of a megabyte and more get buffers that come back from the worker for the next body.
const reusingServer = useTestServer({ PLINTH_MEMORY_BODY_MB: '32', PLINTH_MEMORY_BODY_MAX_MB: '4' });
let token: string;
let spoolingToken: string;
let reusingToken: string;

beforeAll(async () => {
  token = (await accountWithToken(server.store, 'builder')).token;
  spoolingToken = (await accountWithToken(spoolingServer.store, 'builder')).token;
  reusingToken = (await accountWithToken(reusingServer.store, 'builder')).token;
});

const uploads = () => server.stats().uploads;
const spoolDir = (s: TestServer): string[] => readdirSync(join(s.dataDir, 'tmp', 'uploads'));

function deploy(body: Buffer, options: { contentType?: string; on?: TestServer; chunked?: boolean } = {}): Promise<TestResponse & { json: any }> {
  const on = options.on ?? server;
  const headers: Record<string, string> = { authorization: `Bearer ${on === server ? token : on === reusingServer ? reusingToken : spoolingToken}` };
  if (options.contentType) headers['content-type'] = options.contentType;
  if (options.chunked) return chunkedDeploy(on, body, headers);
  return request({ port: on.port, host: 'api.localhost', method: 'POST', path: '/v1/deploy', headers, body }).then((res) => ({
    ...res,
    json: JSON.parse(res.text),
  }));
}

/** A body sent with Transfer-Encoding: chunked, so without a Content-Length. */
function chunkedDeploy(on: TestServer, body: Buffer, headers: Record<string, string>): Promise<TestResponse & { json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: on.port, method: 'POST', path: '/v1/deploy', headers: { host: 'api.localhost', ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: JSON.parse(text) } as TestResponse & { json: any });
        });
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, 1000));
    req.end(body.subarray(1000));
  });
}

/** An upload that declares `declared` bytes and sends only the first few: the server holds it. */
function heldUpload(declared: number): ClientRequest {
  const req = httpRequest({
    host: '127.0.0.1',
    port: server.port,
    method: 'POST',
    path: '/v1/deploy',
    headers: { host: 'api.localhost', authorization: `Bearer ${token}`, 'content-length': String(declared) },
    agent: false,
  });
  req.on('error', () => undefined);
  req.write(Buffer.alloc(100_000, 1));
  return req;
}

async function page(name: string, path: string): Promise<string> {
  return (await request({ port: server.port, host: `${name}.sites.localhost`, path })).text;
}

describe('deploy bodies in memory', () => {
  it.each([
    [
      'tar',
      () =>
        tarBytes([
          ['index.html', '<h1>tar</h1>'],
          ['a/b.txt', 'bee'],
        ]),
      undefined,
    ],
    [
      'tar.gz',
      () =>
        tgzBytes([
          ['index.html', '<h1>tar.gz</h1>'],
          ['a/b.txt', 'bee'],
        ]),
      undefined,
    ],
    [
      'zip',
      () =>
        zipBytes([
          ['index.html', '<h1>zip</h1>'],
          ['a/b.txt', 'bee'.repeat(100)],
        ]),
      undefined,
    ],
    [
      'JSON',
      () =>
        Buffer.from(
          JSON.stringify({
            files: [
              { path: 'index.html', content: '<h1>JSON</h1>' },
              { path: 'a/b.txt', content: 'bee' },
            ],
          }),
        ),
      'application/json',
    ],
  ])('publishes a %s body received into memory, never spooled', async (kind, body, contentType) => {
    const before = uploads();
    const res = await deploy(body(), { contentType });
    expect(res.status).toBe(201);
    expect(uploads()).toMatchObject({ bodiesInMemory: before.bodiesInMemory + 1, bodiesSpooled: before.bodiesSpooled, heldBytes: 0, heldBodies: 0 });
    expect(await page(res.json.site.name, '/')).toBe(`<h1>${kind}</h1>`);
    expect(await page(res.json.site.name, '/a/b.txt')).toMatch(/^(bee)+$/);
  });

  it('gives the same answers from memory as from a spool file, refusals included', async () => {
    const bodies = [
      tgzBytes([
        ['index.html', '<h1>same</h1>'],
        ['node_modules/x.js', 'skipped'],
      ]),
      tgzBytes([['page.html', 'no index']]),
      tgzBytes([
        ['index.html', 'x'],
        ['.env', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n'],
      ]),
      Buffer.from('not an archive at all'),
      zipBytes([['../escape.html', 'x']]),
    ];
    for (const body of bodies) {
      const inMemory = await deploy(body);
      const spooled = await deploy(body, { on: spoolingServer });
      expect(inMemory.status).toBe(spooled.status);
      expect(inMemory.json.error).toEqual(spooled.json.error);
      expect(inMemory.json.skipped).toEqual(spooled.json.skipped);
    }
    expect(spoolingServer.stats().uploads.bodiesInMemory).toBe(0);
  });

  it('spools a body larger than a body in memory may be', async () => {
    const before = uploads();
    const body = tarBytes([
      ['index.html', '<h1>big</h1>'],
      ['big.bin', randomBytes(1_200_000)],
    ]);
    const res = await deploy(body);
    expect(res.status).toBe(201);
    expect(uploads()).toMatchObject({ bodiesInMemory: before.bodiesInMemory, bodiesSpooled: before.bodiesSpooled + 1 });
  });

  it('spools a body without a Content-Length (chunked)', async () => {
    const before = uploads();
    const res = await deploy(
      tgzBytes([
        ['index.html', '<h1>chunked</h1>'],
        ['pad.bin', randomBytes(5000)],
      ]),
      { chunked: true },
    );
    expect(res.status).toBe(201);
    expect(uploads()).toMatchObject({ bodiesInMemory: before.bodiesInMemory, bodiesSpooled: before.bodiesSpooled + 1 });
  });

  it('spools once the budget is taken, and frees the budget of uploads the clients abandon', async () => {
    const held = [heldUpload(1_000_000), heldUpload(1_000_000)];
    expect(await waitUntil(() => uploads().heldBodies === 2, 5000, 10)).toBe(true);
    expect(uploads().heldBytes).toBe(2_000_000);
    // Held in memory: no spool file for either.
    expect(spoolDir(server)).toEqual([]);

    const before = uploads();
    const res = await deploy(
      tgzBytes([
        ['index.html', '<h1>over budget</h1>'],
        ['pad.bin', randomBytes(200_000)],
      ]),
    );
    expect(res.status).toBe(201);
    expect(uploads()).toMatchObject({ bodiesInMemory: before.bodiesInMemory, bodiesSpooled: before.bodiesSpooled + 1 });

    for (const req of held) req.destroy();
    expect(await waitUntil(() => uploads().heldBodies === 0, 5000, 10)).toBe(true);
    expect(uploads().heldBytes).toBe(0);

    const again = await deploy(tgzBytes([['index.html', '<h1>room again</h1>']]));
    expect(again.status).toBe(201);
    expect(uploads()).toMatchObject({ bodiesInMemory: before.bodiesInMemory + 1, heldBytes: 0 });
  });

  it('treats bytes past the declared Content-Length as it does for a spooled body', async () => {
    const body = tgzBytes([['index.html', '<h1>declared</h1>']]);
    const exchange = (on: TestServer, bearer: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(on.port, '127.0.0.1');
        const received: Buffer[] = [];
        socket.on('data', (chunk) => received.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => resolve(Buffer.concat(received).toString('latin1')));
        socket.setTimeout(5000, () => socket.destroy());
        socket.write(`POST /v1/deploy HTTP/1.1\r\nHost: api.localhost\r\nAuthorization: Bearer ${bearer}\r\nContent-Length: ${body.byteLength}\r\n\r\n`);
        socket.end(Buffer.concat([body, Buffer.from('these bytes were never declared\r\n\r\n')]));
      });
    // uWS frames the body by its Content-Length and refuses what follows as a malformed request,
    // closing the connection; whichever way the body was kept, the client sees the same.
    const statuses = (answer: string): string[] => answer.match(/^HTTP\/1\.1 \d+/gm) ?? [];
    const inMemory = await exchange(server, token);
    const spooled = await exchange(spoolingServer, spoolingToken);
    expect(statuses(inMemory)).toEqual(statuses(spooled));
    expect(inMemory.length === 0).toBe(spooled.length === 0);
  });

  it('leaves nothing held and no spool file behind', async () => {
    expect(await waitUntil(() => uploads().heldBodies === 0 && spoolDir(server).length === 0, 5000, 10)).toBe(true);
    expect(uploads().heldBytes).toBe(0);
  });
});

describe('buffers of large bodies, used again', () => {
  const sha = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

  it('receives later bodies into the buffers of earlier ones, and every site keeps exactly its own bytes', async () => {
    const sites: Array<{ name: string; media: Buffer; marker: string }> = [];
    // Rounds of three at once, of changing sizes (1.1 to 3.5 MB): a smaller body lands in a larger
    // buffer that held another site's bytes a moment ago.
    for (let round = 0; round < 4; round++) {
      const sent = [0, 1, 2].map((i) => {
        const media = randomBytes(1_100_000 + ((round * 3 + i) % 5) * 600_000);
        const marker = `round ${round} site ${i}`;
        return {
          media,
          marker,
          body: tarBytes([
            ['index.html', `<h1>${marker}</h1>`],
            ['media.bin', media],
          ]),
        };
      });
      const answers = await Promise.all(sent.map((one) => deploy(one.body, { on: reusingServer })));
      answers.forEach((res, i) => {
        expect(res.status).toBe(201);
        sites.push({ name: res.json.site.name, media: sent[i]!.media, marker: sent[i]!.marker });
      });
    }
    const stats = reusingServer.stats().uploads;
    expect(stats.bodiesSpooled).toBe(0);
    expect(stats.buffersReused).toBeGreaterThan(0);
    for (const site of sites) {
      const home = await request({ port: reusingServer.port, host: `${site.name}.sites.localhost`, path: '/' });
      expect(home.text).toBe(`<h1>${site.marker}</h1>`);
      const media = await request({ port: reusingServer.port, host: `${site.name}.sites.localhost`, path: '/media.bin' });
      expect(media.body.byteLength).toBe(site.media.byteLength);
      expect(sha(media.body)).toBe(sha(site.media));
    }
  });

  it('uses a buffer again after the body in it was refused', async () => {
    const secret = tarBytes([
      ['index.html', '<h1>x</h1>'],
      ['pad.bin', randomBytes(1_500_000)],
      ['config.js', 'const key = "AKIAIOSFODNN7EXAMPLF";\nconst secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";\n'],
    ]);
    const refused = await deploy(secret, { on: reusingServer });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('blocked_secret');
    const before = reusingServer.stats().uploads.buffersReused;
    const media = randomBytes(1_400_000);
    const res = await deploy(
      tarBytes([
        ['index.html', '<h1>after a refusal</h1>'],
        ['media.bin', media],
      ]),
      { on: reusingServer },
    );
    expect(res.status).toBe(201);
    expect(reusingServer.stats().uploads.buffersReused).toBe(before + 1);
    const served = await request({ port: reusingServer.port, host: `${res.json.site.name}.sites.localhost`, path: '/media.bin' });
    expect(sha(served.body)).toBe(sha(media));
  });
});
