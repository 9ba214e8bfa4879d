import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileBytes } from './content.js';
import { deriveSeed } from './random.js';
import { contentTypeOf, planSite, type FileKind, type PlannedFile } from './site-plan.js';

export { contentTypeOf, type FileKind };

/**
 * The corpus: what `plinth load prepare` published, recorded so that a run can check the bytes it
 * gets, `export` can write the same files for another server, and `clean` can remove it. Every
 * file's bytes follow from the site's seed, so the file records only path, size, sha256 and type.
 */
export interface CorpusFile {
  path: string;
  size: number;
  sha256: string;
  /** The Content-Type a server should send for it. */
  type: string;
  kind: FileKind;
}

export interface CorpusSite {
  name: string;
  /** The site's address as the API gave it, e.g. http://calm-heron-4821.sites.localhost:8080. */
  url: string;
  /** The Host header visitors send (the address's host and port). */
  host: string;
  revision: string;
  seed: number;
  has404: boolean;
  files: CorpusFile[];
}

export interface Corpus {
  format: 'plinth-load-corpus';
  version: 1;
  created_at: string;
  api: string;
  seed: number;
  /** Size factor the files were made with (1: the realistic sizes). */
  scale: number;
  sites: CorpusSite[];
}

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** A site's files with their bytes, from its seed (what prepare publishes and export writes). */
export function siteFiles(seed: number, scale: number): Array<PlannedFile & { bytes: Buffer }> {
  const planned = planSite(seed, scale);
  return planned.map((file) => {
    const bytes = fileBytes(seed, file, planned);
    return { ...file, size: bytes.length, bytes };
  });
}

export function describeFile(file: PlannedFile & { bytes: Buffer }): CorpusFile {
  return { path: file.path, size: file.bytes.length, sha256: sha256(file.bytes), type: contentTypeOf(file.path), kind: file.kind };
}

export function siteSeed(corpusSeed: number, index: number): number {
  return deriveSeed(corpusSeed, `site-${index}`);
}

/** A changed version of a site's home page, for deploys during a run (the `n`th change). */
export function changedHomePage(site: CorpusSite, n: number): Buffer {
  return Buffer.from(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${site.name} v${n}</title></head><body><h1>Change ${n} of ${site.name}</h1></body></html>\n`,
  );
}

export function writeCorpus(file: string, corpus: Corpus): void {
  writeFileSync(file, `${JSON.stringify(corpus, null, 1)}\n`);
}

export function readCorpus(file: string): Corpus {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the corpus ${file}: ${(err as Error).message}`);
  }
  const corpus = parsed as Partial<Corpus>;
  if (corpus.format !== 'plinth-load-corpus' || !Array.isArray(corpus.sites)) throw new Error(`${file} is not a corpus written by plinth load prepare`);
  if (corpus.sites.length === 0) throw new Error(`the corpus ${file} has no sites`);
  return corpus as Corpus;
}
