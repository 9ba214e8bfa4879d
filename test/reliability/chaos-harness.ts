// Kills `node dist/main.js` with SIGKILL at random moments while deploys run (new sites, updates
// of every archive format and JSON, patches, rollbacks), restarts it on the same data directory,
// and checks after every kill that nothing acknowledged was lost and nothing was half-published.
// With several nodes (a cluster, see chaos-nodes.ts) the deploys go to random live nodes, one node
// at a time is killed while the others go on taking deploys, and every check runs on every node.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { tarBytes, tgzBytes, zipBytes } from '../helpers/archive-bytes.js';
import { jsonDeployBody } from '../helpers/deploy-client.js';
import type { MainProcess } from '../helpers/main-process.js';
import type { ChaosNodes } from './chaos-nodes.js';
import { exchange, type Exchange, type ExchangeOutcome } from './exchange.js';
import { generateFiles, hashes, patchFiles, randomSource, sameHashes, sha256, type FileSet, type RevisionModel, type SiteModel } from './site-model.js';

export interface ChaosOptions {
  /** One node on a data directory, or the nodes of a cluster (chaos-nodes.ts). */
  nodes: ChaosNodes;
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

/**
 * When the kill comes: after a random time, mid-upload, mid-ingest or commit, as a sweep starts;
 * with several nodes also `startup`, a node killed again while it starts up and catches up.
 */
type KillMode = 'timer' | 'upload' | 'ingest' | 'sweep' | 'startup';
type Format = 'tgz' | 'tar' | 'zip' | 'json';

export interface ChaosFigures {
  seed: number;
  nodes: number;
  kills: number;
  killsByMode: Partial<Record<KillMode, number>>;
  killsByNode: number[];
  /** Operations caught at the kill: still sending their body, or sent and waiting (ingest or commit). */
  cutWhileUploading: number;
  cutWhileProcessing: number;
  deploysSent: number;
  deploysByKind: Record<string, number>;
  acknowledged: number;
  /** Acknowledged by the other nodes while one was down: what its restart had to catch up with. */
  acknowledgedWhileDown: number;
  /** Cut off by a kill after their commit but before their answer: the site serves them (allowed). */
  committedUnacknowledged: number;
  /** Cut off by a kill before their commit: the site kept its previous revision. */
  notCommitted: number;
  sites: number;
  checks: {
    api: number;
    filesServed: number;
    blobRows: number;
    blobsHashed: number;
    revisions: number;
    /** Acknowledged revisions found in a node's revision list (several nodes). */
    revisionsListed: number;
    /** Files of a killed node's blob cache hashed against their names (several nodes). */
    cacheFilesHashed: number;
    total: number;
  };
  leftoversFoundAfterKill: { uploads: number; blobTemp: number };
  leftoversAfterRestart: number;
  /** Revisions a kill caught in the middle of being pruned (hidden, rows partly gone): finished by the next sweep. */
  halfPrunedRevisionsSeen: number;
  restartMs: { median: number; max: number };
  durationS: number;
  failures: string[];
}

/** The site a client goes on with, and the node that acknowledged its last change. */
interface FollowUp {
  site: SiteModel;
  node: number;
}

interface PendingCreate {
  kind: 'builder' | 'anonymous';
  files: FileSet;
}

const ONE_NODE_MODES: readonly KillMode[] = ['timer', 'upload', 'ingest', 'sweep'];
const CLUSTER_MODES: readonly KillMode[] = [...ONE_NODE_MODES, 'startup'];

export async function runChaos(options: ChaosOptions): Promise<ChaosFigures> {
  const { nodes } = options;
  const random = randomSource(options.seed);
  const maxSites = options.maxSites ?? 30;
  const concurrency = options.concurrency ?? 3;
  const say = options.progress ?? (() => undefined);
  const started = performance.now();
  const modes = nodes.size === 1 ? ONE_NODE_MODES : CLUSTER_MODES;
  const indexes = Array.from({ length: nodes.size }, (_, i) => i);

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
    nodes: nodes.size,
    kills: 0,
    killsByMode: Object.fromEntries(modes.map((mode) => [mode, 0])),
    killsByNode: indexes.map(() => 0),
    cutWhileUploading: 0,
    cutWhileProcessing: 0,
    deploysSent: 0,
    deploysByKind: {},
    acknowledged: 0,
    acknowledgedWhileDown: 0,
    committedUnacknowledged: 0,
    notCommitted: 0,
    sites: 0,
    checks: { api: 0, filesServed: 0, blobRows: 0, blobsHashed: 0, revisions: 0, revisionsListed: 0, cacheFilesHashed: 0, total: 0 },
    leftoversFoundAfterKill: { uploads: 0, blobTemp: 0 },
    leftoversAfterRestart: 0,
    halfPrunedRevisionsSeen: 0,
    restartMs: { median: 0, max: 0 },
    durationS: 0,
    failures,
  };
  const restartTimes: number[] = [];
  const hashedBlobs = new Set<string>();
  const hashedCacheFiles = new Set<string>();
  /** Nodes killed and not started again: no operation is sent to them. */
  const down = new Set<number>();
  let tag = 0;

  const uploadsDir = (node: number): string => join(nodes.dataDir(node), 'tmp', 'uploads');
  const blobTempDir = (node: number): string => join(nodes.dataDir(node), 'blobs', 'tmp');
  const countIn = (dir: string): number => (existsSync(dir) ? readdirSync(dir).length : 0);
  /** Names the node in a failure, when there are several. */
  const at = (node: number): string => (nodes.size > 1 ? `node ${node}: ` : '');
  const liveNodes = (): number[] => indexes.filter((node) => !down.has(node) && nodes.running(node) !== undefined);
  const portOf = (node: number): number => nodes.running(node)!.port;

  async function start(node: number): Promise<MainProcess> {
    const t0 = performance.now();
    const main = await nodes.start(node);
    restartTimes.push(performance.now() - t0);
    down.delete(node);
    // Start-up must have removed what the killed process left behind, before taking requests.
    const left = countIn(uploadsDir(node)) + countIn(blobTempDir(node));
    figures.leftoversAfterRestart += left;
    if (left > 0) fail(`${at(node)}${left} upload/temp files survived the restart`);
    return main;
  }

  // ---- operations -------------------------------------------------------------------------

  interface Op {
    kind: 'create' | 'deploy' | 'patch' | 'rollback';
    node: number;
    site?: SiteModel;
    createKind?: 'builder' | 'anonymous';
    expected: FileSet;
    exchange: Exchange;
    /** Its node was killed while it was in flight. */
    cut?: boolean;
  }

  function formatBody(files: FileSet, format: Format, fields: Record<string, unknown>): { body: Buffer; contentType?: string } {
    const list = [...files];
    if (format === 'json') return { body: Buffer.from(jsonDeployBody(list, fields)), contentType: 'application/json' };
    return { body: format === 'tgz' ? tgzBytes(list) : format === 'tar' ? tarBytes(list) : zipBytes(list) };
  }

  /**
   * The next operation, on a random site (or a new one), sent to a random live node. `follow` is
   * a client going on with the site it just changed, at once, through another node.
   */
  function nextOp(accountToken: string, wantBig: boolean, follow?: FollowUp): Op | undefined {
    const up = liveNodes();
    if (up.length === 0) return undefined;
    // One node takes everything; a cluster's deploys go to any live node, as behind a load balancer.
    const others = follow ? up.filter((node) => node !== follow.node) : [];
    const node = up.length === 1 ? up[0]! : random.pick(others.length > 0 ? others : up);
    // A site whose last operation was cut off waits for the check to tell whether it committed.
    const idle = sites.filter((site) => !site.busy && !site.pending);
    const followed = follow && !follow.site.busy && !follow.site.pending ? follow.site : undefined;
    const roll = random.next();
    const name = `t${++tag}`;
    const bigFileBytes = (kind: 'builder' | 'anonymous'): number | undefined =>
      kind === 'builder' && (wantBig || random.chance(0.1)) ? random.int(1, 6) * 1024 * 1024 : undefined;

    if (!followed && sites.length < maxSites && (roll < 0.25 || idle.length === 0)) {
      const createKind = random.chance(0.7) ? 'builder' : 'anonymous';
      const files = generateFiles(random, name, { maxFiles: 10, bigFileBytes: bigFileBytes(createKind) });
      const format = random.pick<Format>(['tgz', 'tar', 'zip', 'json']);
      const { body, contentType } = formatBody(files, format, {});
      const headers: Record<string, string> = {};
      if (createKind === 'builder') headers.authorization = `Bearer ${accountToken}`;
      if (contentType) headers['content-type'] = contentType;
      return { kind: 'create', node, createKind, expected: files, exchange: send(node, '/v1/deploy', body, headers) };
    }
    if (!followed && idle.length === 0) return undefined;
    const site = followed ?? random.pick(idle);
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
      return { kind: 'deploy', node, site, expected: files, exchange: send(node, path, body, headers) };
    }
    if (roll < 0.8) {
      const { files, changed, deleted } = patchFiles(random, live.files, name);
      const body = Buffer.from(jsonDeployBody([...changed], { site: site.name, base_revision: live.id, patch: true, deleted }));
      return {
        kind: 'patch',
        node,
        site,
        expected: files,
        exchange: send(node, '/v1/deploy', body, { ...auth, 'content-type': 'application/json' }),
      };
    }
    // Anonymous sites keep only their live revision in reach; accounts reach back a year.
    const target = site.kind === 'builder' && site.revisions.length > 1 ? random.pick(site.revisions.slice(0, -1)) : live;
    const body = Buffer.from(JSON.stringify({ revision: target.id }));
    return {
      kind: 'rollback',
      node,
      site,
      expected: target.files,
      exchange: send(node, `/v1/sites/${site.name}/rollback`, body, { ...auth, 'content-type': 'application/json' }),
    };
  }

  function send(node: number, path: string, body: Buffer, headers: Record<string, string>): Exchange {
    // Large bodies go at a client's pace, so that uploads are often under way when the kill comes.
    return exchange({
      port: portOf(node),
      host: 'api.localhost',
      method: 'POST',
      path,
      headers,
      body,
      pieceGapMs: body.byteLength > 1024 * 1024 ? 3 : 0,
    });
  }

  /** Takes the answer into the model; returns the site when the operation was acknowledged. */
  function settle(op: Op, outcome: ExchangeOutcome, accountToken: string): SiteModel | undefined {
    const killed = op.cut === true;
    if ('error' in outcome) {
      if (!killed) {
        fail(`${at(op.node)}${op.kind} failed without a kill: ${outcome.error}`);
        return undefined;
      }
      if (op.kind === 'create') pendingCreates.push({ kind: op.createKind!, files: op.expected });
      else op.site!.pending = op.expected;
      return undefined;
    }
    // A rollback to what is live already makes no revision: acknowledged, the live one stays.
    if (op.kind === 'rollback' && outcome.status === 200 && outcome.json?.unchanged === true) {
      figures.acknowledged++;
      if (down.size > 0 && !killed) figures.acknowledgedWhileDown++;
      return op.site;
    }
    if (outcome.status !== 201) {
      if (outcome.status >= 500 || !killed) fail(`${at(op.node)}${op.kind} answered ${outcome.status}: ${outcome.body.toString('utf8').slice(0, 300)}`);
      return undefined;
    }
    figures.acknowledged++;
    if (down.size > 0 && !killed) figures.acknowledgedWhileDown++;
    const revision: RevisionModel = { id: outcome.json.revision.id, number: outcome.json.revision.number, files: op.expected };
    if (op.kind === 'create') {
      const kind = op.createKind!;
      const site: SiteModel = {
        name: outcome.json.site.name,
        kind,
        token: kind === 'builder' ? accountToken : outcome.json.site_token,
        revisions: [revision],
        busy: false,
      };
      sites.push(site);
      return site;
    }
    op.site!.revisions.push(revision);
    return op.site;
  }

  // ---- one epoch: deploys until a node is killed, and while it is down ------------------------

  /** Runs the workload, kills one node as `mode` says, and returns which. */
  async function runEpoch(mode: KillMode, accountToken: string): Promise<number> {
    const inflight = new Set<Op>();
    let stopping = false;
    const worker = async (): Promise<void> => {
      let follow: FollowUp | undefined;
      while (!stopping) {
        const op = nextOp(accountToken, mode === 'upload', follow);
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
        const acknowledged = settle(op, outcome, accountToken);
        if (op.site) op.site.busy = false;
        // Behind a load balancer without sticky sessions, a client that goes on with its site at
        // once reaches another node: that node must already know what this one acknowledged.
        follow = acknowledged && nodes.size > 1 && random.chance(0.3) ? { site: acknowledged, node: op.node } : undefined;
      }
    };
    const workers = Array.from({ length: concurrency }, () => worker());

    const victim = await killTrigger(mode, inflight);
    for (const op of inflight) {
      if (op.node !== victim) continue;
      op.cut = true;
      if (op.exchange.phase === 'uploading') figures.cutWhileUploading++;
      else if (op.exchange.phase === 'waiting') figures.cutWhileProcessing++;
    }
    const main = nodes.running(victim)!;
    down.add(victim);
    main.child.kill('SIGKILL');
    countKill(mode === 'startup' ? 'timer' : mode, victim);
    await main.exited;
    // The other nodes of a cluster go on taking deploys, which the killed one must catch up with.
    if (liveNodes().length > 0) await sleep(random.int(100, 1500));
    stopping = true;
    await Promise.all(workers);
    return victim;
  }

  function countKill(mode: KillMode, node: number): void {
    figures.kills++;
    figures.killsByMode[mode] = (figures.killsByMode[mode] ?? 0) + 1;
    figures.killsByNode[node]!++;
  }

  /** Waits for the moment `mode` names and returns the node to kill then. */
  async function killTrigger(mode: KillMode, inflight: ReadonlySet<Op>): Promise<number> {
    const deadline = performance.now() + 5000;
    const until = async (ready: () => boolean): Promise<void> => {
      while (!ready() && performance.now() < deadline) await sleep(1);
    };
    const anyNode = (): number => {
      const up = liveNodes();
      return up.length === 1 ? up[0]! : random.pick(up);
    };
    /** The node of one of these operations (a live one), or any live node. */
    const nodeOf = (ops: Op[]): number => {
      if (nodes.size === 1) return 0;
      const candidates = ops.filter((op) => !down.has(op.node));
      if (candidates.length === 0) return anyNode();
      return candidates.length === 1 ? candidates[0]!.node : random.pick(candidates).node;
    };
    switch (mode) {
      case 'timer':
      case 'startup':
        await sleep(random.int(20, 900));
        return anyNode();
      case 'upload': {
        // A large body part-way through.
        const uploading = (): Op[] =>
          [...inflight].filter((op) => op.exchange.phase === 'uploading' && op.exchange.bytesSent > 0 && op.exchange.totalBytes > 1024 * 1024);
        await until(() => uploading().length > 0);
        return nodeOf(uploading());
      }
      case 'ingest': {
        // Body fully sent, answer not there yet: unpacking, storing blobs or committing.
        const waiting = (): Op[] => [...inflight].filter((op) => op.exchange.phase === 'waiting');
        await until(() => waiting().length > 0);
        const seen = waiting();
        await sleep(random.int(0, 150));
        const still = waiting();
        return nodeOf(still.length > 0 ? still : seen);
      }
      case 'sweep': {
        const from = new Map(liveNodes().map((node) => [node, nodes.running(node)!.output().length]));
        const sweeping = (): number | undefined =>
          [...from].find(([node, offset]) => (nodes.running(node)?.output().indexOf('"sweep.started"', offset) ?? -1) !== -1)?.[0];
        await until(() => sweeping() !== undefined);
        return sweeping() ?? anyNode();
      }
    }
  }

  // ---- checks -----------------------------------------------------------------------------

  /**
   * With `victim` down: every revision is whole, every row's blob is kept (on the node's disk, or
   * in the bucket) and right, and what the kill left in the victim's data directory is listed.
   */
  async function checkStore(victim: number): Promise<void> {
    figures.leftoversFoundAfterKill.uploads += countIn(uploadsDir(victim));
    figures.leftoversFoundAfterKill.blobTemp += countIn(blobTempDir(victim));
    await nodes.withRecords(async (store, blobs) => {
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
              if ((await blobs.size(row.sha256)) !== row.size) {
                fail(`${site.name} ${revision.id} ${row.path}: blob ${row.sha256} missing or wrong size`);
                continue;
              }
              // The place the records name (what a node reads with PostgreSQL away) holds the blob.
              if (row.pack !== undefined && blobs.readPacked !== undefined) {
                const packed = await blobs.readPacked(row.pack.key, row.pack.offset, row.size);
                if (packed === undefined || sha256(packed) !== row.sha256)
                  fail(`${site.name} ${revision.id} ${row.path}: ${row.pack.key} does not hold its blob where the record says`);
              }
              if (!hashedBlobs.has(row.sha256)) {
                if (sha256(await blobs.read(row.sha256)) !== row.sha256) fail(`blob ${row.sha256} does not hash to its name`);
                hashedBlobs.add(row.sha256);
                figures.checks.blobsHashed++;
              }
              for (const [encoding, size] of Object.entries(row.encodings ?? {})) {
                if ((await blobs.size(row.sha256, encoding as 'br' | 'gzip')) !== size) fail(`${row.sha256} has no ${encoding} variant of ${size} bytes`);
              }
            }
          }
          before = page.nextBefore;
        } while (before !== undefined);

        const modelled = sites.find((s) => s.name === site.name);
        if (modelled) settlePending(modelled, site.liveRevision, site.liveNumber, (id) => store.listFiles(id));
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
      const recorded = new Set(store.listSiteIds().map((id) => store.getSiteById(id)?.name));
      for (const site of sites) if (!recorded.has(site.name)) fail(`${site.name}, acknowledged, is gone from the records`);
    });
    if (nodes.blobHome === 'bucket') checkCache(victim);
  }

  /**
   * The live revision of a site the model knows must be its last acknowledged one, or, when an
   * operation on it was cut off by the kill, the revision that operation committed with exactly
   * the files it sent. The model then takes that revision as acknowledged.
   */
  function settlePending(
    site: SiteModel,
    liveId: string | undefined,
    liveNumber: number,
    listFiles: (revisionId: string) => Array<{ path: string; sha256: string }>,
  ): void {
    const last = site.revisions[site.revisions.length - 1]!;
    const pending = site.pending;
    site.pending = undefined;
    if (liveId === last.id) {
      if (pending) figures.notCommitted++;
      return;
    }
    if (!pending || liveId === undefined || site.revisions.some((r) => r.id === liveId)) {
      return fail(`${site.name} is live at ${liveId}, which is neither its last acknowledged revision ${last.id} nor the one cut off`);
    }
    const live = new Map(listFiles(liveId).map((row) => [row.path, row.sha256]));
    if (!sameHashes(live, hashes(pending))) return fail(`${site.name}: the cut-off revision ${liveId} holds files other than those sent`);
    site.revisions.push({ id: liveId, number: liveNumber, files: pending });
    figures.committedUnacknowledged++;
  }

  /**
   * A node's blob folder is a cache of the bucket: whatever a kill left in it (beside the temp
   * folder, which start-up clears) is served as it is, so every file must be whole and right.
   */
  function checkCache(node: number): void {
    const root = join(nodes.dataDir(node), 'blobs');
    const hex2 = /^[0-9a-f]{2}$/;
    // Blob files sit in `aa/` (the flat layout of new stores), or in `aa/bb/` (stores made before).
    const folders: string[] = [];
    for (const a of existsSync(root) ? readdirSync(root).filter((name) => hex2.test(name)) : []) {
      folders.push(join(root, a));
      for (const b of readdirSync(join(root, a)).filter((name) => hex2.test(name))) folders.push(join(root, a, b));
    }
    for (const folder of folders) {
      for (const name of readdirSync(folder)) {
        const match = /^([0-9a-f]{64})(\.br|\.gz)?$/.exec(name);
        if (!match) continue;
        const path = join(folder, name);
        const seen = `${path}:${statSync(path).ino}`;
        if (hashedCacheFiles.has(seen)) continue;
        hashedCacheFiles.add(seen);
        figures.checks.cacheFilesHashed++;
        const bytes = readFileSync(path);
        let decoded: Buffer | undefined;
        try {
          decoded = match[2] === '.br' ? brotliDecompressSync(bytes) : match[2] === '.gz' ? gunzipSync(bytes) : bytes;
        } catch {
          decoded = undefined;
        }
        if (!decoded || sha256(decoded) !== match[1]) fail(`${at(node)}cached ${relative(root, path)} does not hold what its name says`);
      }
    }
  }

  /**
   * With every node up again, each in turn, the one just restarted first: every page of every
   * site serves the bytes of its last acknowledged revision (or of the cut-off one that committed),
   * then the API lists that revision with those files. Pages come first because serving reads
   * the node's replica alone, so the restarted node shows there what its start-up caught up with,
   * before any API request (which brings the replica up to PostgreSQL) could.
   */
  async function checkServing(restarted: number): Promise<void> {
    const order = [restarted, ...liveNodes().filter((node) => node !== restarted)];
    for (const node of order) {
      for (const site of sites) await checkPages(node, site.name, site.kind === 'anonymous', site.revisions[site.revisions.length - 1]!.files);
      for (const orphan of orphans) await checkPages(node, orphan.name, true, orphan.files);
      for (const site of sites) await checkApi(node, site);
    }
    figures.sites = sites.length + orphans.length;
  }

  /** The site's live revision and its file list, as the API of this node gives them. */
  async function checkApi(node: number, site: SiteModel): Promise<void> {
    const auth = { authorization: `Bearer ${site.token}` };
    const last = site.revisions[site.revisions.length - 1]!;
    const info = await get(node, 'api.localhost', `/v1/sites/${site.name}`, auth);
    if (!info || info.status !== 200) return fail(`${at(node)}GET /v1/sites/${site.name} answered ${info?.status}`);
    const liveId: string = info.json.live_revision.id;
    if (liveId !== last.id) return fail(`${at(node)}${site.name} serves ${liveId}, not its last acknowledged revision ${last.id}`);
    const listing = await get(node, 'api.localhost', `/v1/sites/${site.name}/files`, auth);
    if (!listing || listing.status !== 200) return fail(`${at(node)}GET /v1/sites/${site.name}/files answered ${listing?.status}`);
    const listed = new Map<string, string>(listing.json.files.map((f: { path: string; sha256: string }) => [f.path, f.sha256]));
    if (listing.json.revision !== liveId || !sameHashes(listed, hashes(last.files))) {
      return fail(`${at(node)}${site.name}: the file list of ${liveId} differs from what was deployed`);
    }
    if (nodes.size > 1) await checkRevisions(node, site, auth);
  }

  /** Every acknowledged revision still in the site's reach is in this node's list, whole. */
  async function checkRevisions(node: number, site: SiteModel, auth: Record<string, string>): Promise<void> {
    const found = new Map<string, number>();
    let cursor: string | null = null;
    do {
      const page = await get(node, 'api.localhost', `/v1/sites/${site.name}/revisions?limit=200${cursor ? `&cursor=${cursor}` : ''}`, auth);
      if (!page || page.status !== 200) return fail(`${at(node)}GET /v1/sites/${site.name}/revisions answered ${page?.status}`);
      for (const revision of page.json.revisions as Array<{ id: string; files: number }>) found.set(revision.id, revision.files);
      cursor = page.json.next_cursor;
    } while (cursor);
    // Anonymous sites keep only their live revision.
    const kept = site.kind === 'builder' ? site.revisions : site.revisions.slice(-1);
    for (const revision of kept) {
      figures.checks.revisionsListed++;
      if (found.get(revision.id) !== revision.files.size)
        fail(`${at(node)}${site.name} does not list revision ${revision.id} with its ${revision.files.size} files`);
    }
  }

  async function checkPages(node: number, name: string, badged: boolean, files: FileSet): Promise<void> {
    for (const [path, bytes] of files) {
      const page = await get(node, `${name}.sites.localhost`, `/${path}`);
      if (!page || page.status !== 200) {
        fail(`${at(node)}${name}/${path} answered ${page?.status}`);
        continue;
      }
      figures.checks.filesServed++;
      // Anonymous pages carry the badge after the original bytes (the test pages have no </body>).
      const same = badged && path.endsWith('.html') ? page.body.subarray(0, bytes.byteLength).equals(bytes) : page.body.equals(bytes);
      if (!same) fail(`${at(node)}${name}/${path} does not serve the deployed bytes`);
    }
  }

  async function get(node: number, host: string, path: string, headers: Record<string, string> = {}) {
    if (host === 'api.localhost') figures.checks.api++;
    const outcome = await exchange({ port: portOf(node), host, path, headers }).outcome;
    if ('error' in outcome) {
      fail(`${at(node)}GET ${host}${path}: ${outcome.error}`);
      return undefined;
    }
    if (outcome.status >= 500) fail(`${at(node)}GET ${host}${path} answered ${outcome.status}`);
    return outcome;
  }

  // ---- the run ----------------------------------------------------------------------------

  const accountToken = await nodes.makeAccount();
  for (const node of indexes) if (!nodes.running(node)) await start(node);
  try {
    for (let epoch = 0; figures.kills < options.kills || figures.deploysSent < options.minDeploys; epoch++) {
      const mode = modes[epoch % modes.length]!;
      const victim = await runEpoch(mode, accountToken);
      await checkStore(victim);
      if (mode === 'startup') {
        // Killed again while it starts: reading its replica, catching up, starting its threads.
        try {
          await nodes.startAndKill(victim, random.int(0, 2500));
          countKill('startup', victim);
        } catch (err) {
          fail(`${at(victim)}${(err as Error).message}`);
        }
      }
      await start(victim);
      await checkServing(victim);
      say(
        `kill ${figures.kills} (${mode}${nodes.size > 1 ? `, node ${victim}` : ''}): ${figures.deploysSent} deploys sent, ${figures.acknowledged} acknowledged, ${sites.length} sites, ${failures.length} failures`,
      );
      if (failures.length > 20) break;
    }
  } finally {
    for (const node of indexes) {
      const main = nodes.running(node);
      if (!main) continue;
      main.child.kill('SIGTERM');
      const exit = await main.exited;
      if (exit.code !== 0) fail(`${at(node)}final graceful stop exited with ${exit.code ?? exit.signal}`);
    }
  }

  const sorted = [...restartTimes].sort((a, b) => a - b);
  figures.restartMs = { median: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0), max: Math.round(sorted[sorted.length - 1] ?? 0) };
  const { api, filesServed, blobRows, blobsHashed, revisions, revisionsListed, cacheFilesHashed } = figures.checks;
  figures.checks.total = api + filesServed + blobRows + blobsHashed + revisions + revisionsListed + cacheFilesHashed;
  figures.durationS = Math.round((performance.now() - started) / 100) / 10;
  return figures;
}
