/** The docs host (SPEC 1): guides as pages and Markdown, the agent guide, `llms.txt`, OpenAPI. */
import type { Config } from '../config.js';
import { type HttpRequest, type HttpResponse, writeResponse } from '../http/index.js';
import type { Logger } from '../log.js';
import { buildDocsSite, type DocsSite } from './site.js';

export { buildDocsSite, prefersMarkdown, type DocsRequest, type DocsResponse, type DocsSite } from './site.js';
export { openApiDocument } from './openapi.js';
export { docFacts } from './facts.js';
export { GUIDE_DIR, type Guide } from './guides.js';

export interface DocsHost {
  site: DocsSite;
  handle(res: HttpResponse, req: HttpRequest): void;
}

export interface DocsOptions {
  config: Readonly<Config>;
  log: Logger;
}

/**
 * Builds every page once (the guides are read and rendered here, so a broken guide stops
 * start-up rather than a request); each request is then answered synchronously from memory.
 */
export function createDocs(options: DocsOptions): DocsHost {
  const started = performance.now();
  const site = buildDocsSite(options.config);
  options.log.debug({ pages: site.paths().length, ms: Math.round(performance.now() - started) }, 'docs.built');
  return {
    site,
    handle(res, req) {
      const method = req.getCaseSensitiveMethod().toUpperCase();
      const answer = site.respond({
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
