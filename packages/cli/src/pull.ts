import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { callApi } from './api-client.js';
import { reportFailure } from './output.js';
import { readFolder } from './pack.js';
import { siteOfFolder, type SiteCommandOptions } from './site-commands.js';
import { isStateFile, writeState } from './state.js';
import { UPLOAD_FILE } from './upload-parts.js';

/**
 * `plinth pull [dir]`: writes the live revision's files of the folder's site into the folder and
 * records that revision in `.service.json`, so the next deploy builds on what is live (after a
 * 409, once the changes are merged). Files of the folder that are not in the live revision are
 * left alone and listed: they would be published by the next deploy.
 */

interface FileList {
  revision: string;
  files: Array<{ path: string; size: number; sha256: string }>;
}

/** Names that are never written into the folder, whatever the server lists. */
const NEVER_WRITTEN = new Set(['.git', 'node_modules', UPLOAD_FILE]);

/** Where a listed path goes in the folder, or `undefined` if it would land outside it (or on a file of ours). */
export function pullTarget(root: string, path: string): string | undefined {
  if (path === '' || path.includes('\0') || path.includes('\\') || isAbsolute(path)) return undefined;
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || NEVER_WRITTEN.has(segment))) return undefined;
  if (isStateFile(segments.at(-1)!)) return undefined;
  const target = resolve(root, ...segments);
  const inside = relative(root, target);
  return inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside) ? undefined : target;
}

export async function pullCommand(options: SiteCommandOptions): Promise<number> {
  const { state, token } = await siteOfFolder(options);
  const root = resolve(options.dir);
  const base = `v1/sites/${encodeURIComponent(state.site)}/files`;
  const listed = await callApi({ apiUrl: options.apiUrl, method: 'GET', path: base, token });
  if (listed.status !== 200) return reportFailure(options, 'Listing the live files', listed);
  const list = listed.json as unknown as FileList;
  // Every path is checked before anything is written: a list with one bad path writes nothing.
  const targets = list.files.map((file) => ({ ...file, target: pullTarget(root, file.path) }));
  const refused = targets.find((file) => file.target === undefined);
  if (refused) {
    options.err(`Pull failed: the service listed ${JSON.stringify(refused.path)}, which is no path inside ${options.dir}; nothing was written.`);
    return 1;
  }
  // A link in the folder would carry a write elsewhere (a listed docs/.bashrc through docs → ~).
  const linked = targets.find((file) => throughLink(root, file.path));
  if (linked) {
    options.err(`Pull failed: ${linked.path} would be written through a symbolic link in ${options.dir}; nothing was written.`);
    return 1;
  }
  const here = new Map((await readFolder(root)).map((file) => [file.path, file.sha256]));
  let written = 0;
  const replaced: string[] = [];
  for (const file of targets) {
    const local = here.get(file.path);
    here.delete(file.path);
    if (local === file.sha256) continue;
    options.status?.(`Pulling ${file.path}…`);
    const answer = await callApi({
      apiUrl: options.apiUrl,
      method: 'GET',
      path: `${base}/${file.path.split('/').map(encodeURIComponent).join('/')}`,
      token,
      headers: { Accept: '*/*' },
    });
    if (answer.status !== 200) {
      options.status?.(undefined);
      return reportFailure(options, `Reading ${file.path}`, answer);
    }
    const bytes = answer.body;
    if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) {
      options.status?.(undefined);
      options.err(`Pull failed: ${file.path} arrived with other contents than listed (someone published meanwhile?); run plinth pull again.`);
      return 1;
    }
    await mkdir(dirname(file.target!), { recursive: true });
    await writeFile(file.target!, bytes);
    written++;
    if (local !== undefined) replaced.push(file.path);
  }
  options.status?.(undefined);
  await writeState(root, { ...state, revision: list.revision });
  const extra = [...here.keys()];
  if (options.json) {
    options.out(JSON.stringify({ site: state.site, revision: list.revision, written, replaced, not_live: extra }, null, 2));
    return 0;
  }
  options.out(
    `Pulled the live revision of ${state.site} into ${options.dir}: ${written} ${written === 1 ? 'file' : 'files'} written` +
      `, ${list.files.length - written} already the same.`,
  );
  if (replaced.length > 0) options.out(`Replaced with the live copy: ${listed10(replaced)}`);
  if (extra.length > 0) {
    options.out(`Not in the live revision (left as they are, and published by the next deploy): ${listed10(extra)}`);
  }
  options.out(`.service.json now names the live revision: the next plinth deploy ${options.dir} builds on it.`);
  return 0;
}

/** Whether writing `path` under `root` would pass through (or replace) a symbolic link that is there now. */
export function throughLink(root: string, path: string): boolean {
  let at = root;
  for (const segment of path.split('/')) {
    at = join(at, segment);
    let isLink: boolean;
    try {
      isLink = lstatSync(at).isSymbolicLink();
    } catch {
      return false; // nothing there yet: pull makes it
    }
    if (isLink) return true;
  }
  return false;
}

const listed10 = (paths: readonly string[]): string => `${paths.slice(0, 10).join(', ')}${paths.length > 10 ? ` and ${paths.length - 10} more` : ''}`;
