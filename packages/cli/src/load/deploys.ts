import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent } from 'undici';
import { callApi, refusal } from './api.js';
import { decodeBody, headerValue } from './client.js';
import { changedHomePage, sha256, type Corpus } from './corpus.js';

/**
 * Deploys and rollbacks on the hottest sites while the traffic runs ("agents uploading while
 * visitors read"): each change is a patch deploy of the site's home page, the next a rollback to
 * the revision before it, alternately. For each: how long the API took to answer `201`, and how
 * long after that the new bytes were served (polling the home page through the first target).
 * Sites left changed at the end are rolled back, so the corpus stays true for the next run.
 */
export interface DeployEvent {
  /** Seconds since the run started. */
  at_s: number;
  site: string;
  kind: 'deploy' | 'rollback';
  status: number;
  /** From the request to the API's answer. */
  deploy_ms: number;
  /** From the `201` until the first target served the new bytes (absent if it never did within 30 s). */
  visible_ms?: number;
  /** Requests made to see the new bytes (they reach the first target as site requests too). */
  polls: number;
  error?: string;
}

export interface DeployOptions {
  corpus: Corpus;
  api: string;
  token: string;
  agent: Agent;
  perMinute: number;
  /** How many of the most popular sites take the changes. */
  hotSites: number;
  /** Where to look for the new bytes of a site: the origin to send to (Host is the site's). */
  observeOrigin: (site: number) => string;
  /** Tells the generator threads the bytes a page may now have. */
  accept: (site: number, path: string, sha256: string) => void;
  startedAt: number;
}

interface SiteState {
  live: string;
  /** The revision to roll back to, while the site carries a change of ours. */
  before?: string;
  changes: number;
}

export function startDeploys(options: DeployOptions): { stop(): Promise<DeployEvent[]> } {
  const events: DeployEvent[] = [];
  const states = new Map<number, SiteState>();
  const hot = Math.max(1, Math.min(options.hotSites, options.corpus.sites.length));
  let stopped = false;
  let turn = 0;
  const intervalMs = 60_000 / options.perMinute;

  const change = async (index: number, finishing = false): Promise<void> => {
    const site = options.corpus.sites[index]!;
    let state = states.get(index);
    if (!state) {
      // The corpus's revision is stale once an earlier run has deployed and rolled back: ask.
      state = { live: (await liveRevision(options, site.name)) ?? site.revision, changes: 0 };
      states.set(index, state);
    }
    const rollingBack = state.before !== undefined;
    const original = site.files.find((f) => f.path === 'index.html')!.sha256;
    const page = changedHomePage(site, ++state.changes + turn * 1000);
    const expected = rollingBack ? original : sha256(page);
    if (!rollingBack) options.accept(index, 'index.html', expected);
    const started = Date.now();
    const answer = rollingBack
      ? await callApi(options.agent, options.api, {
          method: 'POST',
          path: `/sites/${site.name}/rollback`,
          token: options.token,
          json: { revision: state.before },
        })
      : await callApi(options.agent, options.api, {
          method: 'POST',
          path: '/deploy',
          token: options.token,
          json: { site: site.name, base_revision: state.live, patch: true, files: [{ path: 'index.html', content: page.toString('utf8'), encoding: 'utf8' }] },
        });
    const answered = Date.now();
    const event: DeployEvent = {
      at_s: (started - options.startedAt) / 1000,
      site: site.name,
      kind: rollingBack ? 'rollback' : 'deploy',
      status: answer.status,
      deploy_ms: answered - started,
      polls: 0,
    };
    const revision = (answer.body.revision as { id?: string } | undefined)?.id;
    if (answer.status === 200 || answer.status === 201) {
      if (rollingBack) state.before = undefined;
      else state.before = state.live;
      if (revision) state.live = revision;
      if (!finishing) {
        const seen = await waitForBytes(options, index, expected, 30_000);
        event.polls = seen.polls;
        if (seen.at !== undefined) event.visible_ms = seen.at - answered;
      }
    } else {
      event.error = refusal(answer);
      // Someone else moved the site on: start again from its live revision.
      if (answer.status === 409) state.live = (await liveRevision(options, site.name)) ?? state.live;
    }
    // The rollbacks that tidy up after the run are not part of it.
    if (!finishing) events.push(event);
  };

  const loop = (async () => {
    await sleep(intervalMs / 2);
    while (!stopped) {
      const started = Date.now();
      try {
        await change(turn++ % hot);
      } catch (err) {
        events.push({
          at_s: (started - options.startedAt) / 1000,
          site: '',
          kind: 'deploy',
          status: 0,
          deploy_ms: Date.now() - started,
          polls: 0,
          error: (err as Error).message,
        });
      }
      const wait = intervalMs - (Date.now() - started);
      for (let waited = 0; waited < wait && !stopped; waited += 100) await sleep(Math.min(100, wait - waited));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      for (const [index, state] of states) if (state.before !== undefined) await change(index, true).catch(() => undefined);
      return events.filter((event) => event.at_s >= 0).sort((a, b) => a.at_s - b.at_s);
    },
  };
}

async function liveRevision(options: DeployOptions, name: string): Promise<string | undefined> {
  const answer = await callApi(options.agent, options.api, { method: 'GET', path: `/sites/${encodeURIComponent(name)}`, token: options.token });
  return (answer.body.live_revision as { id?: string } | undefined)?.id;
}

/** Polls the site's home page until its bytes are `expected`: when they first were (if they were), and how many polls it took. */
async function waitForBytes(options: DeployOptions, index: number, expected: string, timeoutMs: number): Promise<{ at?: number; polls: number }> {
  const site = options.corpus.sites[index]!;
  const deadline = Date.now() + timeoutMs;
  let polls = 0;
  while (Date.now() < deadline) {
    polls++;
    try {
      const res = await options.agent.request({
        origin: options.observeOrigin(index),
        path: '/',
        method: 'GET',
        headers: { host: site.host, 'accept-encoding': 'br, gzip', 'cache-control': 'no-cache' },
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode === 200 && sha256(decodeBody(body, headerValue(res.headers, 'content-encoding'))) === expected) return { at: Date.now(), polls };
    } catch {
      // Not yet: a node restarting, a connection reset.
    }
    await sleep(10);
  }
  return { polls };
}
