import { randomUUID } from 'node:crypto';
import type { Agent } from 'undici';
import { callApi, refusal } from './api.js';
import { describeFile, siteFiles, siteSeed, writeCorpus, type Corpus, type CorpusSite } from './corpus.js';

/**
 * `plinth load prepare`: publishes the corpus through the target's public API with an account's
 * API token, as JSON deploys (a site larger than one request allows goes up as a first deploy and
 * patches), and writes the corpus file as it goes, so an interrupted prepare can still be cleaned.
 */
export interface PrepareOptions {
  agent: Agent;
  api: string;
  token: string;
  sites: number;
  corpusFile: string;
  seed: number;
  scale: number;
  concurrency: number;
  progress?: (done: number, total: number) => void;
  warn?: (text: string) => void;
}

// Raw bytes per request: base64 makes it 4/3 larger, well inside the 90 MB a request may carry.
const BATCH_BYTES = 48 * 1024 * 1024;

export async function prepareCorpus(options: PrepareOptions): Promise<Corpus> {
  const me = await callApi(options.agent, options.api, { method: 'GET', path: '/me', token: options.token });
  if (me.status !== 200) throw new Error(`the API refused the token: ${refusal(me)}`);
  const used = Number(me.body.sites_used ?? 0);
  const limit = me.body.sites_limit;
  if (typeof limit === 'number' && limit - used < options.sites)
    throw new Error(
      `the account (plan ${String(me.body.plan)}) may own ${limit} sites and has ${used}: ${options.sites} more do not fit. Use --sites ${Math.max(0, limit - used)} or an account on a larger plan.`,
    );
  if (me.body.plan === 'free')
    options.warn?.('the account is on the Free plan: its pages carry the badge, so the checks of page bytes will count wrong_body. Use a paid plan.');
  const corpus: Corpus = {
    format: 'plinth-load-corpus',
    version: 1,
    created_at: new Date().toISOString(),
    api: options.api,
    seed: options.seed,
    scale: options.scale,
    sites: [],
  };
  const made: Array<CorpusSite | undefined> = [];
  let next = 0;
  let done = 0;
  const save = (): void => writeCorpus(options.corpusFile, { ...corpus, sites: made.filter((site): site is CorpusSite => site !== undefined) });
  const worker = async (): Promise<void> => {
    while (next < options.sites) {
      const index = next++;
      made[index] = await publishSite(options, index);
      if (++done % 25 === 0) save();
      options.progress?.(done, options.sites);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } finally {
    save();
  }
  corpus.sites = made as CorpusSite[];
  return corpus;
}

async function publishSite(options: PrepareOptions, index: number): Promise<CorpusSite> {
  const seed = siteSeed(options.seed, index);
  const files = siteFiles(seed, options.scale);
  // index.html first: every deploy must carry it; large files follow in patches of their own.
  const batches: Array<typeof files> = [[]];
  let size = 0;
  for (const file of files) {
    if (size + file.bytes.length > BATCH_BYTES && batches.at(-1)!.length > 0) {
      batches.push([]);
      size = 0;
    }
    batches.at(-1)!.push(file);
    size += file.bytes.length;
  }
  let name: string | undefined;
  let url = '';
  let revision = '';
  for (const batch of batches) {
    const answer = await callApi(options.agent, options.api, {
      method: 'POST',
      path: '/deploy',
      token: options.token,
      // A deploy whose answer is lost (a busy deployment, a proxy's timeout) is sent again with
      // the same key and answered once, so a long prepare survives it without a duplicate site.
      idempotencyKey: randomUUID(),
      json: {
        ...(name ? { site: name, base_revision: revision, patch: true } : {}),
        files: batch.map((file) => ({ path: file.path, content: file.bytes.toString('base64'), encoding: 'base64' })),
      },
    });
    if (answer.status !== 201) throw new Error(`deploying site ${index + 1} failed: ${refusal(answer)}`);
    const site = answer.body.site as { name: string; url: string };
    name = site.name;
    url = site.url;
    revision = (answer.body.revision as { id: string }).id;
  }
  return {
    name: name!,
    url,
    host: new URL(url).host,
    revision,
    seed,
    has404: files.some((file) => file.path === '404.html'),
    files: files.map(describeFile),
  };
}
