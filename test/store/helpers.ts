import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FileEntry } from '../../src/store/index.js';

/** Worker and child scripts import the built store; `npm test` builds it first. */
export const builtStore = fileURLToPath(new URL('../../dist/store/index.js', import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(builtStore)) throw new Error(`${builtStore} is missing: run npx tsc -p tsconfig.json first`);
}

export function fixture(name: string): URL {
  return new URL(`./fixtures/${name}`, import.meta.url);
}

/** A path-index row whose hash and size identify `marker`, so rows from different revisions differ. */
export function markedEntry(marker: number, type = 'text/plain'): FileEntry {
  return { sha256: marker.toString(16).padStart(64, '0'), size: marker, type };
}
