/** The docs host (SPEC 1): guides as pages and Markdown, the agent guide, `llms.txt`, OpenAPI. */
import type { Config } from '../config.js';
import { type HttpRequest, type HttpResponse, writeResponse } from '../http/index.js';
import type { Logger } from '../log.js';
import { docFacts } from './facts.js';
import { buildDocsSite, type DocsSite } from './site.js';

export { buildDocsSite, prefersMarkdown, type DocsRequest, type DocsResponse, type DocsSite, type DocsSiteOptions } from './site.js';
export { docFacts } from './facts.js';
export { GUIDE_DIR, type Guide } from './guides.js';

export interface DocsHost {
  site: DocsSite;
  handle(res: HttpResponse, req: HttpRequest): void;
}

export interface DocsOptions {
  config: Readonly<Config>;
  log: Logger;
  /** The REST API's OpenAPI document, served as `/openapi.json`. */
  openApi: Record<string, unknown>;
}

/**
 * Sites built in this thread, by everything they are built from (the guides' facts, the public
 * addresses, the OpenAPI document). A thread builds its docs once; a process that starts
 * several servers with the same settings (the test suite starts hundreds, a quarter second of
 * rendering each) builds them once as well. The few most recent are kept.
 */
const builtSites = new Map<string, DocsSite>();
const BUILT_SITES_KEPT = 4;

/**
 * Builds every page once (the guides are read and rendered here, so a broken guide stops
 * start-up rather than a request); each request is then answered synchronously from memory.
 */
export function createDocs(options: DocsOptions): DocsHost {
  const started = performance.now();
  const { config } = options;
  const key = JSON.stringify([docFacts(config), config.publicUrls, config.port, options.openApi]);
  let site = builtSites.get(key);
  if (!site) {
    site = buildDocsSite(config, { openApi: options.openApi });
    builtSites.set(key, site);
    for (const oldest of builtSites.keys()) if (builtSites.size > BUILT_SITES_KEPT) builtSites.delete(oldest);
  }
  const built = site;
  options.log.debug({ pages: site.paths().length, ms: Math.round(performance.now() - started) }, 'docs.built');
  return {
    site: built,
    handle(res, req) {
      const method = req.getCaseSensitiveMethod().toUpperCase();
      const answer = built.respond({
        method,
        path: req.getUrl(),
        accept: req.getHeader('accept') || undefined,
        acceptEncoding: req.getHeader('accept-encoding') || undefined,
        ifNoneMatch: req.getHeader('if-none-match') || undefined,
      });
      writeResponse(res, answer.status, answer.headers, answer.body, { head: method === 'HEAD' });
    },
  };
}
