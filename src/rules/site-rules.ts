/**
 * What a deploy learns about a site beyond its files, stored with its revision: the compiled
 * `_redirects` and `_headers`, and the link check's warnings. A site with none has no record.
 */
import type { CompiledHeaders } from './headers-file.js';
import type { CompiledRedirects } from './redirects-file.js';

/** The files at the site root that hold rules; they are never served as files. */
export const RULES_FILES: readonly string[] = ['_redirects', '_headers'];

export function isRulesFile(path: string): boolean {
  return path === '_redirects' || path === '_headers';
}

/** An internal reference in the deployed HTML or CSS that leads nowhere. */
export interface LinkWarning {
  file: string;
  line: number;
  ref: string;
  kind: 'broken_link';
}

export interface RevisionExtras {
  redirects?: CompiledRedirects;
  headers?: CompiledHeaders;
  /** The first warnings of the link check (see `warningsTotal` for how many there were). */
  warnings?: LinkWarning[];
  warningsTotal?: number;
}
