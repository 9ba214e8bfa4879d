import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { callApi, type ApiAnswer } from './api-client.js';
import { formatBytes, progressBar, reportFailure, type CommandIo } from './output.js';
import { packFiles, readFolder, type FolderFile } from './pack.js';
import { readState, STATE_FILE, stateToken, writeState, type ServiceState } from './state.js';
import { uploadInParts } from './upload-parts.js';

export interface DeployCommandOptions extends Partial<CommandIo> {
  dir: string;
  apiUrl: string;
  /** An API token (`pl_…`); without one, the `api_token` or else the `site_token` in `.service.json`. */
  token?: string;
  /** The token of `plinth login`, used when neither of those is there. */
  savedToken?: string;
  /** Publish on top of the live revision, whatever `.service.json` names (it replaces what is live). */
  force?: boolean;
  /** Upload the whole folder even for a redeploy (no digest). */
  full?: boolean;
  /** Store a draft (`publish=false`): checked and stored, not live; shown at its preview address. */
  draft?: boolean;
  out: (line: string) => void;
  /** Content per upload request of a large deploy (tests make it small). */
  partBytes?: number;
  /** Upload requests in flight at once. */
  parallel?: number;
}

/** Folders up to this size go in one request; larger ones in parts of a manifest. */
export const ONE_REQUEST_BYTES = 32 * 1024 * 1024;
/**
 * Content per part of a large deploy: well under the request limit, small enough that three in
 * flight keep the client's memory low, large enough that per-request work is a small share.
 */
export const PART_BYTES = 16 * 1024 * 1024;

interface DeployAnswer {
  site: { name: string; url: string; claimed: boolean; expires_at?: string };
  revision: { id: string; number: number; live?: false; preview_url?: string };
  site_token?: string;
  claim_url?: string;
  skipped?: string[];
  warnings?: Array<{ file: string; line: number; ref: string }>;
  warnings_total?: number;
  agent_message?: string;
}

/**
 * `plinth deploy [dir]`: packs the folder, publishes it, and keeps `.service.json` (kept out of
 * git) so the next run updates the same site on top of the revision it last published.
 */
export async function deployCommand(options: DeployCommandOptions): Promise<number> {
  const io: CommandIo = { out: options.out, err: options.err ?? options.out, status: options.status, json: options.json };
  const dir = resolve(options.dir);
  // A mistyped folder is the caller's slip, not the service's refusal: one line and status 2, as usage errors.
  const missing = await notAFolder(dir);
  if (missing) {
    io.err(`plinth: ${missing === 'absent' ? 'no such folder' : 'not a folder'}: ${options.dir} (plinth deploy publishes a folder; nothing was sent)`);
    return 2;
  }
  let state = await readState(dir);
  let token = stateToken(state, options.token, options.savedToken);
  if (state && options.force) {
    const live = await liveRevision(options.apiUrl, state, token);
    if ('failure' in live) return reportFailure(io, 'Reading the live revision', live.failure);
    if (live.revision && live.revision.id !== state.revision) {
      const by = live.revision.created_by ? `, published by ${live.revision.created_by}` : '';
      io.err(`--force: this folder replaces revision ${live.revision.number} of ${state.site}, the live one${by} at ${live.revision.created_at}.`);
      state = { ...state, revision: live.revision.id };
    }
  }

  io.status?.(`Reading ${options.dir}…`);
  const files = await readFolder(dir);
  const bytes = files.reduce((sum, file) => sum + file.size, 0);
  const partBytes = options.partBytes ?? PART_BYTES;
  const send = async (): Promise<ApiAnswer> => {
    // A redeploy sends only what changed, and a large folder goes in parts (resumed if a run was
    // cut off); a small new site has nothing to reuse, so it goes whole in one request.
    let sent: ApiAnswer | undefined;
    if (!options.full && (bytes > (options.partBytes ?? ONE_REQUEST_BYTES) || state)) {
      sent = await uploadInParts({ ...options, partBytes }, io, dir, state, token, files);
    }
    return sent ?? (await fullDeploy(options, io, state, token, files));
  };
  let answer = await send();

  // The site token stops working once a person claims the site. If they let its publisher keep
  // updating it, the claim answer carries an API token of their account, once: keep it and go on.
  if (answer.status === 403 && state?.site_token && token === state.site_token) {
    const claim = await claimPoll(options.apiUrl, state);
    if (claim.accountToken) {
      state = { site: state.site, url: state.url, revision: state.revision, api_token: claim.accountToken };
      await writeState(dir, state);
      io.err(
        `${state.site} has been claimed, and its owner let this folder keep publishing: .service.json now holds an API token for your account as "api_token". ` +
          `It can do everything the account can, on every one of its sites; the file is readable by you alone and kept out of git, so keep it out of anything you share.`,
      );
      token = claim.accountToken;
      answer = await send();
    } else if (claim.claimed) {
      io.status?.(undefined);
      return claimedSite(io, state, options.dir);
    }
  }
  io.status?.(undefined);
  if (answer.status === 409 && state && answer.json?.error?.code === 'conflict' && !io.json) return conflict(io, state, options.dir, answer);
  if (answer.status !== 201) {
    const failed = reportFailure(io, 'Deploy', answer);
    if (answer.status === 413 && /\bfiles\b/.test(answer.json?.error?.message ?? '') && !io.json) {
      io.err(`${options.dir} has ${files.length} ${files.length === 1 ? 'file' : 'files'} to publish (.git, node_modules and .service.json left out).`);
    }
    return failed;
  }
  const result = answer.json as unknown as DeployAnswer;
  // A draft is not live: the folder's base stays the live revision until the draft is promoted.
  const draft = result.revision.live === false;
  const next: ServiceState = { site: result.site.name, url: result.site.url, revision: draft && state ? state.revision : result.revision.id };
  // A site token is kept while it still works: the site is unclaimed and no API token was used.
  const siteToken = result.site_token ?? (options.token ? undefined : state?.site_token);
  if (siteToken && !result.site.claimed) {
    next.site_token = siteToken;
    // The claim link, printed once, is kept beside it (as the agent guide's recipe keeps it) until the claim.
    const claimUrl = result.claim_url ?? state?.claim_url;
    if (claimUrl) next.claim_url = claimUrl;
  }
  // The folder's own API token stays with it (one given on the command line is not written down).
  if (state?.api_token && !options.token) next.api_token = state.api_token;
  await writeState(dir, next);

  if (io.json) {
    io.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  if (draft) {
    io.out(`Stored draft revision ${result.revision.number} (not live): ${result.revision.preview_url}`);
    io.out(`Check it there, then make it live with: plinth promote ${result.revision.number}${options.dir === '.' ? '' : ` ${options.dir}`}`);
    return 0;
  }
  io.out(`Published revision ${result.revision.number}: ${result.site.url}`);
  // The agent_message repeats that line for agents, and tells them to save the site token, which
  // this command has just done: a person gets only what they need to act on.
  if (result.claim_url) {
    const until = result.site.expires_at ? ` on ${result.site.expires_at}` : '';
    io.out(`It is temporary: it will be deleted${until} unless you claim it. To keep it, open ${result.claim_url} and sign in.`);
  }
  if (result.site_token) {
    const kept = next.claim_url ? 'site token and claim link are' : 'site token is';
    io.out(`Its ${kept} kept in ${join(options.dir, STATE_FILE)}: the next plinth deploy of the folder updates the site.`);
  }
  if ((result.skipped?.length ?? 0) > 0) {
    const shown = result.skipped!.slice(0, 5).join(', ');
    io.out(`Left out (never published): ${shown}${result.skipped!.length > 5 ? ` and ${result.skipped!.length - 5} more` : ''}`);
  }
  // The link check: every listed reference on a line of its own, as editors and terminals link them.
  for (const warning of result.warnings ?? []) io.out(`warning: ${warning.file}:${warning.line}: ${warning.ref} leads nowhere`);
  const unlisted = (result.warnings_total ?? 0) - (result.warnings?.length ?? 0);
  if (unlisted > 0) io.out(`warning: and ${unlisted} more references that lead nowhere`);
  return 0;
}

/** Why `dir` cannot be published as a folder, if it cannot. */
async function notAFolder(dir: string): Promise<'absent' | 'file' | undefined> {
  try {
    return (await stat(dir)).isDirectory() ? undefined : 'file';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return 'absent';
    throw err;
  }
}

/** `&publish=false` for a draft. */
const draftQuery = (options: DeployCommandOptions): string => (options.draft ? 'publish=false' : '');

const showUpload =
  (io: CommandIo) =>
  (sent: number, total: number): void => {
    io.status?.(sent < total ? `Uploading ${progressBar(sent, total)} ${formatBytes(sent)} / ${formatBytes(total)}` : 'Publishing…');
  };

/** The whole folder as one archive (a small new site, `--full`, or a server without digest deploys). */
async function fullDeploy(
  options: DeployCommandOptions,
  io: CommandIo,
  state: ServiceState | undefined,
  token: string | undefined,
  files: FolderFile[],
): Promise<ApiAnswer> {
  const packed = await packFiles(files);
  io.status?.(`Packed ${packed.files} files (${formatBytes(packed.bytes)}) into ${formatBytes(packed.archiveBytes)}`);
  const headers: Record<string, string> = { 'Content-Type': 'application/gzip' };
  const query: string[] = [];
  if (state) {
    query.push(`site=${encodeURIComponent(state.site)}`);
    headers['X-Base-Revision'] = state.revision;
  }
  if (options.draft) query.push(draftQuery(options));
  const path = query.length > 0 ? `v1/deploy?${query.join('&')}` : 'v1/deploy';
  return callApi({ apiUrl: options.apiUrl, method: 'POST', path, token, headers, body: packed.archive, onUpload: showUpload(io) });
}

/** The claim poll (SPEC 4.3): with the old site token, says whether the site was claimed, and may hand over an API token. */
async function claimPoll(apiUrl: string, state: ServiceState): Promise<{ claimed: boolean; accountToken?: string }> {
  let poll: ApiAnswer;
  try {
    poll = await callApi({ apiUrl, method: 'GET', path: `v1/sites/${encodeURIComponent(state.site)}`, token: state.site_token });
  } catch {
    return { claimed: false };
  }
  const claimed = poll.status === 200 && poll.json?.claimed === true;
  const accountToken = claimed && typeof poll.json?.account_token === 'string' ? poll.json.account_token : undefined;
  return accountToken ? { claimed, accountToken } : { claimed };
}

/** The site token stops working once a person claims the site; say what to do instead. */
function claimedSite(io: CommandIo, state: ServiceState, dir: string): number {
  const message =
    `${state.site} has been claimed: it belongs to an account now, so the site token in .service.json no longer works. ` +
    `Sign in to that account, create an API token in its settings, then run: plinth deploy ${dir} --token pl_… (or set PLINTH_TOKEN, ` +
    `or keep it in .service.json as "api_token" in place of "site_token").`;
  if (io.json) {
    io.out(JSON.stringify({ error: { code: 'forbidden', message }, site: state.site, claimed: true }, null, 2));
  } else {
    io.err(`Deploy failed: ${message}`);
  }
  return 1;
}

interface LiveRevision {
  id: string;
  number: number;
  created_at: string;
  created_by?: string;
}

/** The site's live revision now (GET /v1/sites/<name>): what `--force` builds on. */
async function liveRevision(
  apiUrl: string,
  state: ServiceState,
  token: string | undefined,
): Promise<{ revision: LiveRevision | null } | { failure: ApiAnswer }> {
  const answer = await callApi({ apiUrl, method: 'GET', path: `v1/sites/${encodeURIComponent(state.site)}`, token });
  if (answer.status !== 200) return { failure: answer };
  return { revision: (answer.json?.live_revision as LiveRevision | null | undefined) ?? null };
}

/**
 * Someone published since the folder's revision: nothing was published, and the same deploy
 * would be refused again. Say so, and name the two ways on.
 */
function conflict(io: CommandIo, state: ServiceState, dir: string, answer: ApiAnswer): number {
  io.err(`Deploy failed (409 conflict): ${answer.json?.error?.message ?? 'the site changed since this folder was published'}`);
  io.err(`Someone published ${state.site} after the revision this folder was last published or pulled at. Either:`);
  io.err(`  plinth pull ${dir} — writes the live files into the folder; merge your changes into them, then deploy again`);
  io.err(`  plinth deploy --force ${dir} — publishes this folder on top of the live revision, replacing what is live`);
  return 1;
}
