import type { Agent } from 'undici';
import { callApi, refusal } from './api.js';
import type { Corpus } from './corpus.js';

/**
 * `plinth load clean`: asks the API to delete every site of the corpus. With an API token Plinth
 * deletes a site only once a person approves it (SPEC 4.3), so what comes back is a list of
 * approval pages, unless the site was already gone.
 */
export interface CleanResult {
  approvals: Array<{ site: string; approve_url: string }>;
  deleted: string[];
  gone: string[];
  failed: Array<{ site: string; reason: string }>;
}

export async function cleanCorpus(options: { agent: Agent; api: string; token: string; corpus: Corpus; concurrency: number }): Promise<CleanResult> {
  const result: CleanResult = { approvals: [], deleted: [], gone: [], failed: [] };
  const names = options.corpus.sites.map((site) => site.name);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const site = names[next++]!;
      const answer = await callApi(options.agent, options.api, { method: 'DELETE', path: `/sites/${encodeURIComponent(site)}`, token: options.token });
      if (answer.status === 202 && typeof answer.body.approve_url === 'string') result.approvals.push({ site, approve_url: answer.body.approve_url });
      else if (answer.status === 200 || answer.status === 204) result.deleted.push(site);
      else if (answer.status === 404 || answer.status === 410) result.gone.push(site);
      else result.failed.push({ site, reason: refusal(answer) });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return result;
}
