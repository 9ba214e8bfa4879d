// Mixed load against `node dist/main.js` for a fixed time: visitors on 1,000 sites, a deploy every
// second, API reads and rollbacks, with the server's RSS, open descriptors, LMDB size and blob
// files sampled every 10 s. Every answer is checked; nothing may fail or be a 5xx.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { contentTypeFor } from '../../src/rules/index.js';
import { hashToken, openStore, type FileEntry } from '../../src/store/index.js';
import { tgzBytes, zipBytes } from '../helpers/archive-bytes.js';
import { jsonDeployBody } from '../helpers/deploy-client.js';
import { mainEnv, startMain } from '../helpers/main-process.js';
import { openFds, rssBytes } from '../helpers/proc-stats.js';
import { generateFiles, randomSource, type FileSet } from './site-model.js';

export interface SoakOptions {
  dataDir: string;
  durationS: number;
  /** Sites published before the load starts, all visited. */
  sites?: number;
  /** Visitor requests per second (spread over keep-alive connections). */
  visitsPerSecond?: number;
  sampleEveryS?: number;
  seed?: number;
  progress?: (line: string) => void;
}

export interface SoakSample {
  atS: number;
  rssBytes: number;
  openFds: number;
  lmdbBytes: number;
  blobFiles: number;
  blobBytes: number;
  visits: number;
  deploys: number;
  apiReads: number;
  rollbacks: number;
  p99Ms: number;
}

export interface SoakFigures {
  durationS: number;
  sites: number;
  requests: { visits: number; deploys: number; apiReads: number; rollbacks: number; total: number };
  failures: number;
  serverErrors: number;
  failureExamples: string[];
  /** Blob files the sweeper deleted (revisions of anonymous sites age out at once), and revisions it pruned. */
  swept: { sweeps: number; deletedBlobFiles: number; prunedRevisions: number };
  samples: SoakSample[];
}

const busySiteCount = 20;

export async function runSoak(options: SoakOptions): Promise<SoakFigures> {
  const random = randomSource(options.seed ?? 7);
  const siteCount = options.sites ?? 1000;
  const visitsPerSecond = options.visitsPerSecond ?? 400;
  const sampleEveryMs = (options.sampleEveryS ?? 10) * 1000;
  const say = options.progress ?? (() => undefined);

  // ---- 1,000 published sites, made through the store as an operator's import would ----------
  const { token, pages } = await populate(options.dataDir, siteCount, random);
  const main = await startMain(
    mainEnv(options.dataDir, {
      PLINTH_THREADS: '2',
      PLINTH_INGEST_THREADS: '1',
      PLINTH_LOG_LEVEL: 'info',
      PLINTH_SWEEP_INTERVAL_S: '10',
      PLINTH_BLOB_GRACE_S: '60',
      PLINTH_SITES_LIMIT_BUILDER: '100000',
    }),
  );
  const pid = main.child.pid!;
  // The server closes a keep-alive connection after about 10 s idle (uWS); like any client that
  // reuses connections, this one must drop idle ones sooner, or a request sent just as the server
  // closes one fails (the usual keep-alive race, not a server fault).
  const agent = new Agent({ keepAlive: true, maxSockets: 16, timeout: 5000 });
  const figures: SoakFigures = {
    durationS: options.durationS,
    sites: siteCount,
    requests: { visits: 0, deploys: 0, apiReads: 0, rollbacks: 0, total: 0 },
    failures: 0,
    serverErrors: 0,
    failureExamples: [],
    swept: { sweeps: 0, deletedBlobFiles: 0, prunedRevisions: 0 },
    samples: [],
  };
  const problem = (what: string): void => {
    figures.failures++;
    if (figures.failureExamples.length < 20) figures.failureExamples.push(what);
  };
  let latencies: number[] = [];

  function call(
    host: string,
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
  ): Promise<{ status: number; body: Buffer; json?: any }> {
    return new Promise((resolve) => {
      const started = performance.now();
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: main.port,
          path,
          method: init.method ?? 'GET',
          agent,
          headers: { host, ...init.headers, ...(init.body ? { 'content-length': String(init.body.byteLength) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            latencies.push(performance.now() - started);
            const body = Buffer.concat(chunks);
            const status = res.statusCode ?? 0;
            if (status >= 500) {
              figures.serverErrors++;
              problem(`${status} for ${host}${path}: ${body.toString('utf8').slice(0, 200)}`);
            }
            let json: unknown;
            if (String(res.headers['content-type'] ?? '').startsWith('application/json')) json = JSON.parse(body.toString('utf8'));
            resolve({ status, body, json });
          });
          res.on('error', (err) => {
            problem(`${host}${path}: ${err.message}`);
            resolve({ status: 0, body: Buffer.alloc(0) });
          });
        },
      );
      req.on('error', (err) => {
        problem(`${host}${path}: ${err.message}`);
        resolve({ status: 0, body: Buffer.alloc(0) });
      });
      req.end(init.body);
    });
  }

  // ---- the busy sites: deployed to every second, read through the API, rolled back ----------
  // `locked`: a deploy or rollback to it is under way (a second one would get a 409, rightly).
  const busy: Array<{ name: string; token: string; live: string; anonymous: boolean; revisions: string[]; locked: boolean }> = [];
  for (let i = 0; i < busySiteCount; i++) {
    const anonymous = i % 2 === 0;
    const files = generateFiles(random, `busy-${i}`, { maxFiles: 6 });
    const answer = await call('api.localhost', '/v1/deploy', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(anonymous ? {} : { authorization: `Bearer ${token}` }) },
      body: Buffer.from(jsonDeployBody([...files])),
    });
    if (answer.status !== 201) throw new Error(`could not create a busy site: ${answer.status} ${answer.body.toString('utf8')}`);
    busy.push({
      name: answer.json.site.name,
      token: anonymous ? answer.json.site_token : token,
      live: answer.json.revision.id,
      anonymous,
      revisions: [answer.json.revision.id],
      locked: false,
    });
  }

  const started = performance.now();
  const deadline = started + options.durationS * 1000;
  const running = (): boolean => performance.now() < deadline;

  const visitor = async (share: number): Promise<void> => {
    const gapMs = 1000 / share;
    let next = performance.now();
    while (running()) {
      next += gapMs;
      if (random.chance(0.95)) {
        const page = pages[random.int(0, pages.length - 1)]!;
        const answer = await call(`${page.site}.sites.localhost`, `/${page.path}`);
        if (answer.status !== 200 || !answer.body.equals(page.bytes)) problem(`visit ${page.site}/${page.path}: ${answer.status}`);
      } else {
        const site = random.pick(busy);
        const answer = await call(`${site.name}.sites.localhost`, '/');
        if (answer.status !== 200) problem(`visit busy ${site.name}: ${answer.status}`);
      }
      figures.requests.visits++;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
    }
  };

  const deployer = async (): Promise<void> => {
    let n = 0;
    while (running()) {
      const tick = sleep(1000);
      let site = busy[n % busy.length]!;
      if (site.locked) site = busy[(n + 1) % busy.length]!;
      site.locked = true;
      const files = generateFiles(random, `soak-${n}`, { maxFiles: 6 });
      const format = n % 3;
      const auth = { authorization: `Bearer ${site.token}` };
      const answer =
        format === 0
          ? await call('api.localhost', '/v1/deploy', {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: Buffer.from(jsonDeployBody([...files], { site: site.name, base_revision: site.live })),
            })
          : await call('api.localhost', `/v1/deploy?site=${site.name}`, {
              method: 'POST',
              headers: { ...auth, 'x-base-revision': site.live },
              body: format === 1 ? tgzBytes([...files]) : zipBytes([...files]),
            });
      if (answer.status !== 201) problem(`deploy to ${site.name}: ${answer.status} ${answer.body.toString('utf8').slice(0, 200)}`);
      else {
        site.live = answer.json.revision.id;
        site.revisions.push(site.live);
      }
      site.locked = false;
      figures.requests.deploys++;
      n++;
      await tick;
    }
  };

  const reader = async (): Promise<void> => {
    let n = 0;
    while (running()) {
      const site = random.pick(busy);
      const auth = { authorization: `Bearer ${site.token}` };
      const path = [`/v1/sites/${site.name}`, `/v1/sites/${site.name}/files`, `/v1/sites/${site.name}/revisions`, '/v1/me'][n++ % 4]!;
      const answer = await call('api.localhost', path, { headers: path === '/v1/me' ? { authorization: `Bearer ${token}` } : auth });
      if (answer.status !== 200) problem(`GET ${path}: ${answer.status}`);
      figures.requests.apiReads++;
      // Rollbacks every 5 s, on account sites (anonymous ones keep only their live revision).
      if (n % 25 === 0) {
        const target = busy.find((b) => !b.anonymous && !b.locked && b.revisions.length > 1);
        if (target) {
          target.locked = true;
          const back = target.revisions[target.revisions.length - 2]!;
          const rolled = await call('api.localhost', `/v1/sites/${target.name}/rollback`, {
            method: 'POST',
            headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
            body: Buffer.from(JSON.stringify({ revision: back })),
          });
          if (rolled.status !== 201) problem(`rollback ${target.name}: ${rolled.status}`);
          else {
            target.live = rolled.json.revision.id;
            target.revisions.push(target.live);
          }
          target.locked = false;
          figures.requests.rollbacks++;
        }
      }
      await sleep(200);
    }
  };

  const sampler = async (): Promise<void> => {
    let counted = { visits: 0, deploys: 0, apiReads: 0, rollbacks: 0 };
    while (running()) {
      await sleep(Math.min(sampleEveryMs, Math.max(0, deadline - performance.now())));
      const blobs = blobStats(join(options.dataDir, 'blobs'));
      const sorted = latencies.sort((a, b) => a - b);
      const sample: SoakSample = {
        atS: Math.round((performance.now() - started) / 1000),
        rssBytes: rssBytes(pid),
        openFds: openFds(pid),
        lmdbBytes: fileSize(join(options.dataDir, 'meta', 'data.mdb')),
        blobFiles: blobs.files,
        blobBytes: blobs.bytes,
        visits: figures.requests.visits - counted.visits,
        deploys: figures.requests.deploys - counted.deploys,
        apiReads: figures.requests.apiReads - counted.apiReads,
        rollbacks: figures.requests.rollbacks - counted.rollbacks,
        p99Ms: Math.round((sorted[Math.floor(sorted.length * 0.99)] ?? 0) * 10) / 10,
      };
      latencies = [];
      counted = { ...figures.requests };
      figures.samples.push(sample);
      say(
        `t=${sample.atS}s rss=${(sample.rssBytes / 1048576).toFixed(1)}MB fds=${sample.openFds} lmdb=${(sample.lmdbBytes / 1048576).toFixed(1)}MB blobs=${sample.blobFiles} visits=${sample.visits} deploys=${sample.deploys} p99=${sample.p99Ms}ms failures=${figures.failures}`,
      );
    }
  };

  const visitorLoops = 8;
  try {
    await Promise.all([...Array.from({ length: visitorLoops }, () => visitor(visitsPerSecond / visitorLoops)), deployer(), reader(), sampler()]);
  } finally {
    agent.destroy();
    main.child.kill('SIGTERM');
    const exit = await main.exited;
    if (exit.code !== 0) problem(`graceful stop exited with ${exit.code ?? exit.signal}`);
  }

  for (const line of main.output().split('\n')) {
    if (!line.includes('"sweep.done"')) continue;
    const record = JSON.parse(line) as { deletedBlobFiles: number; prunedRevisions: number };
    figures.swept.sweeps++;
    figures.swept.deletedBlobFiles += record.deletedBlobFiles;
    figures.swept.prunedRevisions += record.prunedRevisions;
  }
  const { visits, deploys, apiReads, rollbacks } = figures.requests;
  figures.requests.total = visits + deploys + apiReads + rollbacks;
  return figures;
}

interface Page {
  site: string;
  path: string;
  bytes: Buffer;
}

/** Publishes `count` account sites straight into the data directory; returns the account's token and every page. */
async function populate(dataDir: string, count: number, random: ReturnType<typeof randomSource>): Promise<{ token: string; pages: Page[] }> {
  const store = openStore({ dir: dataDir });
  try {
    const account = await store.createAccount({ email: `soak-${randomBytes(4).toString('hex')}@example.com`, plan: 'builder' });
    const token = `pl_${randomBytes(24).toString('base64url')}`;
    await store.addApiToken({ accountId: account!.id, tokenHash: hashToken(token), name: 'soak' });
    const pages: Page[] = [];
    const sites: Array<{ name: string; files: FileSet }> = [];
    for (let i = 0; i < count; i++) sites.push({ name: `soak-site-${i}`, files: generateFiles(random, `soak-site-${i}`, { maxFiles: 5 }) });
    // Blobs first without a sync each, one filesystem sync, then the commits (as a deploy does).
    const rowsOf = new Map<string, Map<string, FileEntry>>();
    for (const { name, files } of sites) {
      const rows = new Map<string, FileEntry>();
      for (const [path, bytes] of files) {
        rows.set(path, await store.blobs.putFile(bytes, contentTypeFor(path), { compress: false, durable: false }));
        pages.push({ site: name, path, bytes });
      }
      rowsOf.set(name, rows);
    }
    await store.blobs.flush();
    await Promise.all(
      sites.map(async ({ name }) => {
        const result = await store.commitRevision({
          site: name,
          create: { name, plan: 'builder', claimed: true, accountId: account!.id },
          baseRevision: null,
          files: rowsOf.get(name)!,
          kind: 'deploy',
          createdBy: 'admin',
        });
        if (!result.ok) throw new Error(`populate ${name}: ${result.reason}`);
      }),
    );
    return { token, pages };
  } finally {
    await store.close();
  }
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

function blobStats(root: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  // Blob files sit in fan-out folders: `aa/` (flat), or `aa/bb/` in stores made before.
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name)) walk(join(dir, entry.name));
      else if (entry.isFile() && dir !== root) {
        files++;
        bytes += statSync(join(dir, entry.name)).size;
      }
    }
  };
  walk(root);
  return { files, bytes };
}
