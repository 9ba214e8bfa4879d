import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sites.js';
import { corpusHandler, localCorpus, plinthLoad, readReport, startLoopback, writeJson, type LoopbackServer } from './load-cli.js';

/**
 * `plinth load run` against small servers on loopback (issue 34): it reports a body that is not
 * the corpus's as `wrong_body` (and none for a server that answers right), counts open-loop
 * latency from each request's intended send time, runs one generator thread per core, and exits
 * non-zero on a regression against a baseline. A run lasts half a second where what it checks
 * takes no longer (starting the command and its generator threads costs more than that), and a
 * second or two where it does: a queue needs time to grow, and a rate is only as exact as its run
 * is long.
 */
const dir = tempDir('plinth-load-');
const corpus = localCorpus(20);
const corpusFile = writeJson(dir, 'corpus.json', corpus);
let right: LoopbackServer;
let wrong: LoopbackServer;
let slow: LoopbackServer;

beforeAll(async () => {
  right = await startLoopback(corpusHandler(corpus));
  const serveRight = corpusHandler(corpus);
  // Right statuses and types, but every page and file a few bytes off.
  wrong = await startLoopback((req, res) => {
    const write = res.end.bind(res) as (body: Buffer | string) => void;
    res.end = ((body?: Buffer | string) => {
      if (Buffer.isBuffer(body) && res.statusCode === 200) {
        const changed = Buffer.from(body);
        changed[changed.length - 1]! ^= 1;
        write(changed);
      } else write(body ?? '');
      return res;
    }) as typeof res.end;
    serveRight(req, res);
  });
  // One request at a time, 20 ms each: at most 50 a second, however many connections wait.
  let queue = Promise.resolve();
  slow = await startLoopback((_req, res) => {
    queue = queue.then(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'text/html' }).end('ok');
            resolve();
          }, 20),
        ),
    );
  });
});

afterAll(async () => {
  await Promise.all([right?.close(), wrong?.close(), slow?.close()]);
});

const run = async (args: string[]) => {
  const json = join(dir, `result-${Math.random().toString(36).slice(2)}.json`);
  const result = await plinthLoad(['run', '--corpus', corpusFile, '--json', json, ...args]);
  return { ...result, json, report: () => readReport(readFileSync(json, 'utf8')) };
};

describe('byte checking', () => {
  it('counts every checked answer of a server that changes the bytes as wrong_body', async () => {
    const result = await run(['--connect', wrong.address, '--duration', '500ms', '--connections', '4', '--check', '1']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = result.report();
    const errors = report.overall.errors.by_kind;
    expect(report.overall.checked_bodies).toBeGreaterThan(20);
    expect(errors.wrong_body).toBe(report.overall.checked_bodies);
    expect(report.targets[0]!.errors.by_kind.wrong_body).toBe(errors.wrong_body);
    expect(result.stdout).toMatch(/wrong_body \d+/);
  });

  it('counts none for a server that serves the corpus as it is', async () => {
    const result = await run(['--connect', right.address, '--duration', '500ms', '--connections', '4', '--check', '1']);
    expect(result.code).toBe(0);
    const report = result.report();
    expect(report.overall.checked_bodies).toBeGreaterThan(20);
    expect(report.overall.errors.by_kind).toEqual({ status: 0, wrong_body: 0, wrong_type: 0, connection: 0, timeout: 0 });
    // Misses are answered 404, which is what they should get, and nothing else is.
    expect(report.overall.statuses['404'] ?? 0).toBe(report.overall.by_kind.miss.requests);
    expect(report.overall.statuses['200']).toBe(report.overall.requests - report.overall.by_kind.miss.requests);
  });
});

describe('open-loop latency accounting', () => {
  it('counts from the intended send time, so a server that falls behind shows its queue', async () => {
    // 100 requests a second for 2 s into a server that answers 50 a second: the last ones wait ~2 s.
    const open = await run(['--connect', slow.address, '--duration', '2s', '--rate', '100', '--threads', '1', '--check', '0']);
    expect(open.code).toBe(0);
    const report = open.report();
    // Every request of the schedule was sent, late or not (no coordinated omission).
    expect(report.overall.requests).toBeGreaterThanOrEqual(190);
    expect(report.overall.requests).toBeLessThanOrEqual(201);
    expect(report.overall.latency_ms.p99).toBeGreaterThan(1500);
    expect(report.overall.latency_ms.max).toBeGreaterThan(1500);
    expect(report.mode).toBe('open');
    expect(report.rate).toBe(100);

    // Closed loop with one connection never queues: each request waits only for its own answer.
    // A second, so that one more answer than 50 a second allow (one that was on its way) stays within the bound.
    const closed = await run(['--connect', slow.address, '--duration', '1s', '--connections', '1', '--threads', '1', '--check', '0']);
    const calm = closed.report();
    expect(calm.overall.latency_ms.p50).toBeGreaterThanOrEqual(19);
    expect(calm.overall.latency_ms.p50).toBeLessThan(200);
    expect(calm.overall.requests_per_second).toBeLessThanOrEqual(51);
  });
});

describe('the generator threads', () => {
  it('runs one thread per core, and each one sends', async () => {
    const result = await run(['--connect', right.address, '--duration', '500ms', '--connections', String(4 * availableParallelism()), '--check', '0']);
    expect(result.code).toBe(0);
    const { generator, overall } = result.report();
    expect(generator.threads).toBe(availableParallelism());
    expect(generator.cores).toBe(availableParallelism());
    expect(generator.per_thread.map((t) => t.thread)).toEqual(Array.from({ length: availableParallelism() }, (_, i) => i));
    for (const thread of generator.per_thread) expect(thread.requests, `thread ${thread.thread}`).toBeGreaterThan(0);
    expect(generator.per_thread.reduce((sum, t) => sum + t.requests, 0)).toBe(overall.requests);
    expect(generator.cpu_percent).toBeGreaterThan(0);
    expect(typeof generator.bottleneck).toBe('boolean');
  });
});

describe('the baseline comparison', () => {
  it('exits 3 on a regression beyond the threshold and 0 without one', async () => {
    const first = await run(['--connect', right.address, '--duration', '500ms', '--rate', '50', '--check', '0']);
    expect(first.code).toBe(0);
    const measured = first.report();
    // An earlier run that was far faster: this one is a regression.
    const faster = writeJson(dir, 'faster.json', {
      ...measured,
      overall: { ...measured.overall, requests_per_second: measured.overall.requests_per_second * 10 },
    });
    // An earlier run that was slower in every way: no regression.
    const slower = writeJson(dir, 'slower.json', {
      ...measured,
      overall: { ...measured.overall, requests_per_second: 1, latency_ms: { ...measured.overall.latency_ms, p99: 60_000 } },
    });
    // The two runs against the baselines are far from either bound, and mostly wait on their rate: side by side.
    const [regressed, fine] = await Promise.all([
      run(['--connect', right.address, '--duration', '500ms', '--rate', '50', '--check', '0', '--baseline', faster, '--threshold', '10']),
      run(['--connect', right.address, '--duration', '500ms', '--rate', '50', '--check', '0', '--baseline', slower]),
    ]);
    expect(regressed.code).toBe(3);
    expect(regressed.stderr).toMatch(/regression.*\n\s+overall: requests_per_second/);
    expect(fine.stderr).toBe('');
    expect(fine.code).toBe(0);
    expect(fine.stdout).toMatch(/no regression against/);
  });

  it('refuses a baseline that is not a result, and wrong usage, with their exit statuses', async () => {
    const notResult = writeJson(dir, 'not-result.json', { hello: 1 });
    // Each refusal is a process of its own, independent of the others: all at once.
    const [badBaseline, rateAndConnections, nowhere, deploysWithoutToken, unknown] = await Promise.all([
      run(['--connect', right.address, '--duration', '1s', '--baseline', notResult]),
      plinthLoad(['run', '--corpus', corpusFile, '--rate', '5', '--connections', '5']),
      plinthLoad(['run', '--corpus', corpusFile, '--connect', 'nowhere']),
      plinthLoad(['run', '--corpus', corpusFile, '--deploys-per-minute', '5'], { PLINTH_TOKEN: '' }),
      plinthLoad(['frobnicate']),
    ]);
    expect(badBaseline.code).toBe(1);
    expect(rateAndConnections.code).toBe(2);
    expect(nowhere.code).toBe(2);
    expect(deploysWithoutToken.code).toBe(2);
    expect(unknown.code).toBe(2);
  });
});
