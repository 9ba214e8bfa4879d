import { createHash, type Hash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { createAgent, decodeBody, headerValue } from './client.js';
import { emptyHistogram, quantile, record } from './histogram.js';
import type { FromGenerator, GeneratorSetup, Slice, ToGenerator } from './messages.js';
import { deriveSeed, seededRandom } from './random.js';
import { count, emptyTally, type ErrorKind, type Outcome, type Tally } from './tally.js';
import { expectedStatuses, planRequest, type PlannedRequest } from './traffic.js';
import { createZipf } from './zipf.js';

/**
 * One generator thread: sends its share of the traffic to the round's target, open loop (requests
 * leave at their intended times, whatever the server does, and latency counts from that time, so
 * a stalled server shows its queue: no coordinated omission) or closed loop (each connection sends
 * its next request when the last is answered). Counts per second and per round for the main thread.
 */
const setup = workerData as GeneratorSetup;
const port = parentPort!;
const agent = createAgent(Math.max(1, setup.connections), setup.timeoutMs);
const random = seededRandom(deriveSeed(setup.seed, `thread-${setup.index}`));
const zipf = createZipf(setup.sites.length, setup.zipfExponent);
/** The ETag last seen per target, site and address: what a browser's cache would revalidate with. */
const etags = new Map<string, string>();
let slices = new Map<string, Slice>();
let roundTally = emptyTally();

const clock = (): number => performance.timeOrigin + performance.now();
const post = (message: FromGenerator): void => port.postMessage(message);

function tallyOf(second: number, target: number): Tally {
  const key = `${second}|${target}`;
  let slice = slices.get(key);
  if (!slice) slices.set(key, (slice = { second, target, tally: emptyTally() }));
  return slice.tally;
}

function flushSlices(): void {
  if (slices.size === 0) return;
  post({ type: 'slices', index: setup.index, slices: [...slices.values()] });
  slices = new Map();
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

const essence = (type: string | undefined): string => (type ?? '').split(';')[0]!.trim().toLowerCase();

async function send(target: number, planned: PlannedRequest, intendedAt: number): Promise<void> {
  const site = setup.sites[planned.site]!;
  const origin = setup.targets[target]!.origin ?? site.origin;
  const cacheKey = `${target}|${planned.site}|${planned.url}`;
  const etag = planned.revalidate ? etags.get(cacheKey) : undefined;
  const check = planned.file !== undefined && random() < setup.checkShare;
  const outcome: Outcome = { kind: planned.kind, latencyUs: 0, bytes: 0, checked: false, revalidation: etag !== undefined };
  try {
    const headers: Record<string, string> = { host: site.host, 'accept-encoding': 'br, gzip', 'user-agent': 'plinth-load' };
    if (etag !== undefined) headers['if-none-match'] = etag;
    const res = await agent.request({ origin, path: planned.url, method: 'GET', headers });
    const encoding = headerValue(res.headers, 'content-encoding');
    const keep = check && res.statusCode === 200;
    // A plain body is hashed as it arrives (files of 50 MB are not held); an encoded one is decoded first.
    const hash: Hash | undefined = keep && (encoding === undefined || encoding === 'identity') ? createHash('sha256') : undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      outcome.bytes += chunk.length;
      if (hash) hash.update(chunk);
      else if (keep) chunks.push(chunk);
    }
    outcome.status = res.statusCode;
    const newTag = headerValue(res.headers, 'etag');
    if (res.statusCode === 200 && newTag) etags.set(cacheKey, newTag);
    if (!expectedStatuses(planned, etag !== undefined).includes(res.statusCode)) outcome.error = 'status';
    else if (keep && planned.file) {
      outcome.checked = true;
      let digest: string;
      try {
        digest = hash
          ? hash.digest('hex')
          : createHash('sha256')
              .update(decodeBody(Buffer.concat(chunks), encoding))
              .digest('hex');
      } catch {
        digest = '';
      }
      if (!planned.file.sha256.includes(digest)) outcome.error = 'wrong_body';
      else if (essence(headerValue(res.headers, 'content-type')) !== essence(planned.file.type)) outcome.error = 'wrong_type';
    }
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    outcome.error = (TIMEOUT_CODES.has(code) ? 'timeout' : 'connection') satisfies ErrorKind;
  }
  const done = clock();
  outcome.latencyUs = (done - intendedAt) * 1000;
  count(roundTally, outcome);
  count(tallyOf(Math.floor((done - setup.startedAt) / 1000), target), outcome);
}

async function openLoop(target: number, endsAt: number, lag: ReturnType<typeof emptyHistogram>): Promise<void> {
  const interval = 1000 / setup.ratePerThread;
  // Threads start a fraction of an interval apart, so together they send evenly.
  const start = clock() + (interval * setup.index) / setup.threads;
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; ;) {
    const now = clock();
    for (let at = start + i * interval; at <= now && at < endsAt; at = start + ++i * interval) {
      record(lag, (now - at) * 1000);
      const request = send(target, planRequest(random, zipf, setup.sites, setup.mix), at);
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    }
    const next = start + i * interval;
    if (next >= endsAt) break;
    await sleep(Math.max(0, Math.min(next, endsAt) - clock()));
  }
  await Promise.all(inFlight);
}

async function closedLoop(target: number, endsAt: number): Promise<void> {
  const connection = async (): Promise<void> => {
    while (clock() < endsAt) await send(target, planRequest(random, zipf, setup.sites, setup.mix), clock());
  };
  await Promise.all(Array.from({ length: setup.connections }, connection));
}

async function runRound(round: number, target: number, endsAt: number): Promise<void> {
  roundTally = emptyTally();
  const lag = emptyHistogram();
  const before = performance.eventLoopUtilization();
  const flusher = setInterval(flushSlices, 1000);
  try {
    if (setup.mode === 'open') await openLoop(target, endsAt, lag);
    else await closedLoop(target, endsAt);
  } finally {
    clearInterval(flusher);
  }
  const utilization = performance.eventLoopUtilization(before).utilization;
  flushSlices();
  post({ type: 'round-done', index: setup.index, round, tally: roundTally, utilization, sendLagP99Ms: quantile(lag, 0.99) / 1000 });
}

function accept(site: number, path: string, sha256: string): void {
  for (const files of Object.values(setup.sites[site]?.files ?? {}))
    for (const file of files) if (file.path === path && !file.sha256.includes(sha256)) file.sha256.push(sha256);
}

let queue = Promise.resolve();
port.on('message', (message: ToGenerator) => {
  if (message.type === 'accept') accept(message.site, message.path, message.sha256);
  else if (message.type === 'round') queue = queue.then(() => runRound(message.round, message.target, message.endsAt));
  else
    void queue.then(async () => {
      await agent.close();
      port.close();
    });
});
post({ type: 'ready', index: setup.index });
