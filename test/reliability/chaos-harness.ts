// Kills `node dist/main.js` with SIGKILL at random moments while deploys run (new sites, updates
// of every archive format and JSON, patches, rollbacks), restarts it on the same data directory,
// and checks after every kill that nothing acknowledged was lost and nothing was half-published.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashToken, openStore } from '../../src/store/index.js';
import { tarBytes, tgzBytes, zipBytes } from '../helpers/archive-bytes.js';
import { jsonDeployBody } from '../helpers/deploy-client.js';
import { mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { exchange, type Exchange, type ExchangeOutcome } from './exchange.js';
import {
  generateFiles,
  hashes,
  patchFiles,
  randomSource,
  sameHashes,
  sha256,
  type FileSet,
  type Random,
  type RevisionModel,
  type SiteModel,
} from './site-model.js';

export interface ChaosOptions {
  dataDir: string;
  /** Run until at least this many kills… */
  kills: number;
  /** …and at least this many deploys (creates, updates, patches, rollbacks) were sent. */
  minDeploys: number;
  seed: number;
  /** New sites are made until there are this many. */
  maxSites?: number;
  /** Operations in flight at once (on different sites). */
  concurrency?: number;
  progress?: (line: string) => void;
}

type KillMode = 'timer' | 'upload' | 'ingest' | 'sweep';
type Format = 'tgz' | 'tar' | 'zip' | 'json';

export interface ChaosFigures {
  seed: number;
  kills: number;
  killsByMode: Record<KillMode, number>;
  /** Operations caught at the kill: still sending their body, or sent and waiting (ingest or commit). */
  cutWhileUploading: number;
  cutWhileProcessing: number;
  deploysSent: number;
  deploysByKind: Record<string, number>;
  acknowledged: number;
  /** Cut off by a kill after their commit but before their answer: the site serves them (allowed). */
  committedUnacknowledged: number;
  /** Cut off by a kill before their commit: the site kept its previous revision. */
  notCommitted: number;
  sites: number;
  checks: { api: number; filesServed: number; blobRows: number; blobsHashed: number; revisions: number; total: number };
  leftoversFoundAfterKill: { uploads: number; blobTemp: number };
  leftoversAfterRestart: number;
  /** Revisions a kill caught in the middle of being pruned (hidden, rows partly gone): finished by the next sweep. */
  halfPrunedRevisionsSeen: number;
  restartMs: { median: number; max: number };
  durationS: number;
  failures: string[];
}

interface PendingCreate {
  kind: 'builder' | 'anonymous';
  files: FileSet;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosFigures> {
  const random = randomSource(options.seed);
  const maxSites = options.maxSites ?? 30;
  const concurrency = options.concurrency ?? 3;
  const say = options.progress ?? (() => undefined);
  const started = performance.now();

  const accountToken = await makeAccount(options.dataDir);
  const env = mainEnv(options.dataDir, {
    PLINTH_THREADS: '2',
    PLINTH_INGEST_THREADS: '1',
    PLINTH_LOG_LEVEL: 'debug',
    PLINTH_SWEEP_INTERVAL_S: '1',
    PLINTH_BLOB_GRACE_S: '60',
    PLINTH_SITES_LIMIT_BUILDER: '100000',
  });

  const sites: SiteModel[] = [];
  /** Anonymous sites created by a cut-off deploy: their token never arrived, so only serving is checked. */
  const orphans: Array<{ name: string; files: FileSet }> = [];
  let pendingCreates: PendingCreate[] = [];
  const failures: string[] = [];
  const fail = (message: string): void => {
    failures.push(message);
    say(`FAIL ${message}`);
  };
  const figures: ChaosFigures = {
    seed: options.seed,
    kills: 0,
    killsByMode: { timer: 0, upload: 0, ingest: 0, sweep: 0 },
    cutWhileUploading: 0,
    cutWhileProcessing: 0,
    deploysSent: 0,
    deploysByKind: {},
    acknowledged: 0,
    committedUnacknowledged: 0,
    notCommitted: 0,
    sites: 0,
    checks: { api: 0, filesServed: 0, blobRows: 0, blobsHashed: 0, revisions: 0, total: 0 },
    leftoversFoundAfterKill: { uploads: 0, blobTemp: 0 },
    leftoversAfterRestart: 0,
    halfPrunedRevisionsSeen: 0,
    restartMs: { median: 0, max: 0 },
    durationS: 0,
    failures,
  };
  const restartTimes: number[] = [];
  const hashedBlobs = new Set<string>();
  let tag = 0;

  const uploadsDir = join(options.dataDir, 'tmp', 'uploads');
  const blobTempDir = join(options.dataDir, 'blobs', 'tmp');
  const countIn = (dir: string): number => (existsSync(dir) ? readdirSync(dir).length : 0);

  async function start(): Promise<MainProcess> {
    const t0 = performance.now();
    const main = await startMain(env);
    restartTimes.push(performance.now() - t0);
    // Start-up must have removed what the killed process left behind, before taking requests.
    const left = countIn(uploadsDir) + countIn(blobTempDir);
    figures.leftoversAfterRestart += left;
    if (left > 0) fail(`${left} upload/temp files survived the restart`);
    return main;
  }

  // ---- operations -------------------------------------------------------------------------

  interface Op {
    kind: 'create' | 'deploy' | 'patch' | 'rollback';
    site?: SiteModel;
    createKind?: 'builder' | 'anonymous';
    expected: FileSet;
    exchange: Exchange;
  }

  function formatBody(files: FileSet, format: Format, fields: Record<string, unknown>): { body: Buffer; contentType?: string } {
    const list = [...files];
    if (format === 'json') return { body: Buffer.from(jsonDeployBody(list, fields)), contentType: 'application/json' };
    return { body: format === 'tgz' ? tgzBytes(list) : format === 'tar' ? tarBytes(list) : zipBytes(list) };
  }

  function nextOp(main: MainProcess, wantBig: boolean): Op | undefined {
    const idle = sites.filter((site) => !site.busy);
    const roll = random.next();
    const name = `t${++tag}`;
    const bigFileBytes = (kind: 'builder' | 'anonymous'): number | undefined =>
      kind === 'builder' && (wantBig || random.chance(0.1)) ? random.int(1, 6) * 1024 * 1024 : undefined;

    if (sites.length < maxSites && (roll < 0.25 || idle.length === 0)) {
      const createKind = random.chance(0.7) ? 'builder' : 'anonymous';
      const files = generateFiles(random, name, { maxFiles: 10, bigFileBytes: bigFileBytes(createKind) });
      const format = random.pick<Format>(['tgz', 'tar', 'zip', 'json']);
      const { body, contentType } = formatBody(files, format, {});
      const headers: Record<string, string> = {};
      if (createKind === 'builder') headers.authorization = `Bearer ${accountToken}`;
      if (contentType) headers['content-type'] = contentType;
      return { kind: 'create', createKind, expected: files, exchange: send(main, '/v1/deploy', body, headers) };
    }
    if (idle.length === 0) return undefined;
    const site = random.pick(idle);
    const live = site.revisions[site.revisions.length - 1]!;
    const auth = { authorization: `Bearer ${site.token}` };

    if (roll < 0.55) {
      const files = generateFiles(random, name, { maxFiles: 10, bigFileBytes: bigFileBytes(site.kind) });
      const format = random.pick<Format>(['tgz', 'tar', 'zip', 'json']);
      const fields = { site: site.name, base_revision: live.id };
      const { body, contentType } = formatBody(files, format, fields);
      const headers: Record<string, string> = { ...auth };
      let path = '/v1/deploy';
      if (contentType) headers['content-type'] = contentType;
      else {
        path = `/v1/deploy?site=${site.name}`;
        headers['x-base-revision'] = live.id;
      }
      return { kind: 'deploy', site, expected: files, exchange: send(main, path, body, headers) };
    }
    if (roll < 0.8) {
      const { files, changed, deleted } = patchFiles(random, live.files, name);
      const body = Buffer.from(jsonDeployBody([...changed], { site: site.name, base_revision: live.id, patch: true, deleted }));
      return { kind: 'patch', site, expected: files, exchange: send(main, '/v1/deploy', body, { ...auth, 'content-type': 'application/json' }) };
    }
    // Anonymous sites keep only their live revision in reach; accounts reach back a year.
    const target = site.kind === 'builder' && site.revisions.length > 1 ? random.pick(site.revisions.slice(0, -1)) : live;
    const body = Buffer.from(JSON.stringify({ revision: target.id }));
    return {
      kind: 'rollback',
      site,
      expected: target.files,
      exchange: send(main, `/v1/sites/${site.name}/rollback`, body, { ...auth, 'content-type': 'application/json' }),
    };
  }

  function send(main: MainProcess, path: string, body: Buffer, headers: Record<string, string>): Exchange {
    // Large bodies go at a client's pace, so that uploads are often under way when the kill comes.
    return exchange({ port: main.port, host: 'api.localhost', method: 'POST', path, headers, body, pieceGapMs: body.byteLength > 1024 * 1024 ? 3 : 0 });
  }

  function settle(op: Op, outcome: ExchangeOutcome, killed: boolean): void {
    if ('error' in outcome) {
      if (!killed) return fail(`${op.kind} failed without a kill: ${outcome.error}`);
      if (op.kind === 'create') pendingCreates.push({ kind: op.createKind!, files: op.expected });
      else op.site!.pending = op.expected;
      return;
    }
    if (outcome.status !== 201) {
      if (outcome.status >= 500 || !killed) fail(`${op.kind} answered ${outcome.status}: ${outcome.body.toString('utf8').slice(0, 300)}`);
      return;
    }
    figures.acknowledged++;
    const revision: RevisionModel = { id: outcome.json.revision.id, number: outcome.json.revision.number, files: op.expected };
    if (op.kind === 'create') {
      const kind = op.createKind!;
      sites.push({
        name: outcome.json.site.name,
        kind,
        token: kind === 'builder' ? accountToken : outcome.json.site_token,
        revisions: [revision],
        busy: false,
      });
    } else {
      op.site!.revisions.push(revision);
    }
  }

  // ---- one life of the server, ended by a kill ----------------------------------------------

  async function runEpoch(main: MainProcess, mode: KillMode): Promise<void> {
    const inflight = new Set<Op>();
    let killed = false;
    const worker = async (): Promise<void> => {
      while (!killed) {
        const op = nextOp(main, mode === 'upload');
        if (!op) {
          await sleep(5);
          continue;
        }
        figures.deploysSent++;
        figures.deploysByKind[op.kind] = (figures.deploysByKind[op.kind] ?? 0) + 1;
        if (op.site) op.site.busy = true;
        inflight.add(op);
        const outcome = await op.exchange.outcome;
        inflight.delete(op);
        settle(op, outcome, killed);
        if (op.site) op.site.busy = false;
      }
    };
    const workers = Array.from({ length: concurrency }, () => worker());

    await killTrigger(main, mode, inflight);
    for (const op of inflight) {
      if (op.exchange.phase === 'uploading') figures.cutWhileUploading++;
      else if (op.exchange.phase === 'waiting') figures.cutWhileProcessing++;
    }
    main.child.kill('SIGKILL');
    killed = true;
    figures.kills++;
    figures.killsByMode[mode]++;
    await main.exited;
    await Promise.all(workers);
  }

  async function killTrigger(main: MainProcess, mode: KillMode, inflight: ReadonlySet<Op>): Promise<void> {
    const deadline = performance.now() + 5000;
    const until = async (ready: () => boolean): Promise<void> => {
      while (!ready() && performance.now() < deadline) await sleep(1);
    };
    switch (mode) {
      case 'timer':
        return void (await sleep(random.int(20, 900)));
      case 'upload':
        // A large body part-way through.
        return until(() => [...inflight].some((op) => op.exchange.phase === 'uploading' && op.exchange.bytesSent > 0 && op.exchange.totalBytes > 1024 * 1024));
      case 'ingest': {
        // Body fully sent, answer not there yet: unpacking, storing blobs or committing.
        await until(() => [...inflight].some((op) => op.exchange.phase === 'waiting'));
        return void (await sleep(random.int(0, 150)));
      }
      case 'sweep': {
        const from = main.output().length;
        await until(() => main.output().indexOf('"sweep.started"', from) !== -1);
        return;
      }
    }
  }

  // ---- checks -----------------------------------------------------------------------------

  /** With the server down: every revision is whole, and every row's blob is there and right. */
  async function checkStore(): Promise<void> {
    figures.leftoversFoundAfterKill.uploads += countIn(uploadsDir);
    figures.leftoversFoundAfterKill.blobTemp += countIn(blobTempDir);
    const store = openStore({ dir: options.dataDir });
    try {
      const known = new Set([...sites.map((s) => s.name), ...orphans.map((o) => o.name)]);
      for (const id of store.listSiteIds()) {
        const site = store.getSiteById(id)!;
        if (site.liveRevision === undefined) fail(`site ${site.name} has no live revision`);
        let before: number | undefined;
        do {
          const page = store.listRevisions(id, { before, limit: 200 });
          for (const revision of page.revisions) {
            figures.checks.revisions++;
            const rows = store.listFiles(revision.id);
            if (store.getRevision(revision.id) === undefined) {
              // A prune cut off by the kill: the revision was hidden first, its rows go next and its
              // record last, and the next prune finishes the job. It must never be the live one.
              figures.halfPrunedRevisionsSeen++;
              if (revision.id === site.liveRevision) fail(`live revision ${revision.id} of ${site.name} is being pruned`);
            } else if (rows.length !== revision.files) {
              fail(`revision ${revision.id} lists ${rows.length} of its ${revision.files} files`);
            }
            for (const row of rows) {
              figures.checks.blobRows++;
              const path = store.blobs.pathOf(row.sha256);
              if (!existsSync(path) || statSync(path).size !== row.size) {
                fail(`${site.name} ${revision.id} ${row.path}: blob ${row.sha256} missing or wrong size`);
                continue;
              }
              if (!hashedBlobs.has(row.sha256)) {
                if (sha256(readFileSync(path)) !== row.sha256) fail(`blob ${row.sha256} does not hash to its name`);
                hashedBlobs.add(row.sha256);
                figures.checks.blobsHashed++;
              }
              for (const [encoding, size] of Object.entries(row.encodings ?? {})) {
                const variant = store.blobs.pathOf(row.sha256, encoding as 'br' | 'gzip');
                if (!existsSync(variant) || statSync(variant).size !== size) fail(`${row.sha256} has no ${encoding} variant of ${size} bytes`);
              }
            }
          }
          before = page.nextBefore;
        } while (before !== undefined);

        if (!known.has(site.name)) {
          // A create cut off by the kill that committed anyway: it must be exactly what was sent.
          const live = new Map(store.listFiles(site.liveRevision!).map((row) => [row.path, row.sha256]));
          const match = pendingCreates.find((pending) => sameHashes(hashes(pending.files), live));
          if (!match) {
            fail(`unknown site ${site.name} serves files of no deploy that was sent`);
            continue;
          }
          pendingCreates = pendingCreates.filter((pending) => pending !== match);
          figures.committedUnacknowledged++;
          const revision: RevisionModel = { id: site.liveRevision!, number: site.liveNumber, files: match.files };
          if (match.kind === 'builder') sites.push({ name: site.name, kind: 'builder', token: accountToken, revisions: [revision], busy: false });
          else orphans.push({ name: site.name, files: match.files });
          known.add(site.name);
        }
      }
      figures.notCommitted += pendingCreates.length;
      pendingCreates = [];
    } finally {
      await store.close();
    }
  }

  /** With the server up again: the API and every page answer, with the files of one acknowledged revision. */
  async function checkServing(main: MainProcess): Promise<void> {
    for (const site of sites) {
      const auth = { authorization: `Bearer ${site.token}` };
      const info = await get(main, 'api.localhost', `/v1/sites/${site.name}`, auth);
      if (!info || info.status !== 200) {
        fail(`GET /v1/sites/${site.name} answered ${info?.status}`);
        continue;
      }
      const liveId: string = info.json.live_revision.id;
      const last = site.revisions[site.revisions.length - 1]!;
      let expected: FileSet;
      if (liveId === last.id) {
        expected = last.files;
        if (site.pending) figures.notCommitted++;
      } else if (site.pending && !site.revisions.some((r) => r.id === liveId)) {
        expected = site.pending;
        site.revisions.push({ id: liveId, number: info.json.live_revision.number, files: expected });
        figures.committedUnacknowledged++;
      } else {
        fail(`${site.name} serves ${liveId}, which is neither its last acknowledged revision ${last.id} nor the one cut off`);
        continue;
      }
      site.pending = undefined;

      const listing = await get(main, 'api.localhost', `/v1/sites/${site.name}/files`, auth);
      if (!listing || listing.status !== 200) {
        fail(`GET /v1/sites/${site.name}/files answered ${listing?.status}`);
        continue;
      }
      const listed = new Map<string, string>(listing.json.files.map((f: { path: string; sha256: string }) => [f.path, f.sha256]));
      if (listing.json.revision !== liveId || !sameHashes(listed, hashes(expected))) {
        fail(`${site.name}: the file list of ${liveId} differs from what was deployed`);
        continue;
      }
      await checkPages(main, site.name, site.kind === 'anonymous', expected);
    }
    for (const orphan of orphans) await checkPages(main, orphan.name, true, orphan.files);
    figures.sites = sites.length + orphans.length;
  }

  async function checkPages(main: MainProcess, name: string, badged: boolean, files: FileSet): Promise<void> {
    for (const [path, bytes] of files) {
      const page = await get(main, `${name}.sites.localhost`, `/${path}`);
      if (!page || page.status !== 200) {
        fail(`${name}/${path} answered ${page?.status}`);
        continue;
      }
      figures.checks.filesServed++;
      // Anonymous pages carry the badge after the original bytes (the test pages have no </body>).
      const same = badged && path.endsWith('.html') ? page.body.subarray(0, bytes.byteLength).equals(bytes) : page.body.equals(bytes);
      if (!same) fail(`${name}/${path} does not serve the deployed bytes`);
    }
  }

  async function get(main: MainProcess, host: string, path: string, headers: Record<string, string> = {}) {
    if (host === 'api.localhost') figures.checks.api++;
    const outcome = await exchange({ port: main.port, host, path, headers }).outcome;
    if ('error' in outcome) {
      fail(`GET ${host}${path}: ${outcome.error}`);
      return undefined;
    }
    if (outcome.status >= 500) fail(`GET ${host}${path} answered ${outcome.status}`);
    return outcome;
  }

  // ---- the run ----------------------------------------------------------------------------

  const modes: KillMode[] = ['timer', 'upload', 'ingest', 'sweep'];
  let main = await start();
  try {
    while (figures.kills < options.kills || figures.deploysSent < options.minDeploys) {
      const mode = modes[figures.kills % modes.length]!;
      await runEpoch(main, mode);
      await checkStore();
      main = await start();
      await checkServing(main);
      say(
        `kill ${figures.kills} (${mode}): ${figures.deploysSent} deploys sent, ${figures.acknowledged} acknowledged, ${sites.length} sites, ${failures.length} failures`,
      );
      if (failures.length > 20) break;
    }
  } finally {
    main.child.kill('SIGTERM');
    const exit = await main.exited;
    if (exit.code !== 0) fail(`final graceful stop exited with ${exit.code ?? exit.signal}`);
  }

  const sorted = [...restartTimes].sort((a, b) => a - b);
  figures.restartMs = { median: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0), max: Math.round(sorted[sorted.length - 1] ?? 0) };
  const { api, filesServed, blobRows, blobsHashed, revisions } = figures.checks;
  figures.checks.total = api + filesServed + blobRows + blobsHashed + revisions;
  figures.durationS = Math.round((performance.now() - started) / 100) / 10;
  return figures;
}

/** A Builder account and its API token, made in the data directory as the admin CLI does. */
async function makeAccount(dataDir: string): Promise<string> {
  const store = openStore({ dir: dataDir });
  try {
    const account = await store.createAccount({ email: `chaos-${randomBytes(4).toString('hex')}@example.com`, plan: 'builder' });
    const token = `pl_${randomBytes(24).toString('base64url')}`;
    await store.addApiToken({ accountId: account!.id, tokenHash: hashToken(token), name: 'chaos' });
    return token;
  } finally {
    await store.close();
  }
}

export type { Random };
