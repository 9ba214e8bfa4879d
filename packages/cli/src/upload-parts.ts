import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { callApi, UnreachableError, type ApiAnswer } from './api-client.js';
import { formatBytes, progressBar, type CommandIo } from './output.js';
import { packFiles, splitIntoParts, type FolderFile } from './pack.js';
import { writePrivateFile, type ServiceState } from './state.js';

/**
 * A deploy by manifest (SPEC 4.1 digest deploys, in parts): the whole folder described by path,
 * size and sha256; the contents the service lacks uploaded in requests of at most `partBytes`
 * each, several at once; the site published once, as one revision, by the part that completes
 * it. The manifest's id is kept in `.plinth-upload.json` until the deploy is done, so a run that
 * was cut off (a lost connection, a killed process) resumes: the next run asks the manifest what
 * is still missing and sends only that. Without a credential the manifest's secret is kept there
 * too (the file is private to the user), and sent with every request for the manifest.
 */

export interface PartsOptions {
  apiUrl: string;
  partBytes: number;
  parallel?: number;
  /** Publish as a draft (`publish=false`): checked and stored when the last part arrives, not live. */
  draft?: boolean;
}

/** Where an unfinished upload is remembered between runs (never uploaded; see pack.ts). */
export const UPLOAD_FILE = '.plinth-upload.json';
const DEFAULT_PARALLEL = 3;

interface UploadState {
  manifest: string;
  /** An anonymous manifest's secret, sent as `X-Manifest-Secret`. */
  secret?: string;
  /** The folder and target the manifest was made for: a change means a new manifest. */
  fingerprint: string;
}

/** `undefined` when the server has no digest deploys (the caller sends one archive instead). */
export async function uploadInParts(
  options: PartsOptions,
  io: CommandIo,
  dir: string,
  state: ServiceState | undefined,
  token: string | undefined,
  files: FolderFile[],
): Promise<ApiAnswer | undefined> {
  const target = state ? { site: state.site, base_revision: state.revision } : {};
  const entries = files.map((file) => ({ path: file.path, size: file.size, sha256: file.sha256 }));
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([options.apiUrl, target, options.draft === true, entries]))
    .digest('hex');
  // The manifest's secret, once there is one (a manifest made without a credential).
  let secret: string | undefined;
  const call = (
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: Buffer | Buffer[],
    headers?: Record<string, string>,
    onUpload?: (sent: number, total: number) => void,
  ) =>
    callApi({
      apiUrl: options.apiUrl,
      method,
      path,
      token,
      body,
      headers: secret === undefined ? headers : { ...headers, 'X-Manifest-Secret': secret },
      onUpload,
    });

  // A run that was cut off: its manifest says what it still lacks.
  let status: ApiAnswer | undefined;
  const saved = await readUpload(dir);
  if (saved && saved.fingerprint === fingerprint) {
    secret = saved.secret;
    status = await call('GET', `v1/deploy/manifest/${encodeURIComponent(saved.manifest)}`);
    if (status.status === 200) {
      const missingBytes = Number(status.json?.missing_bytes ?? 0);
      const total = missingBytes + Number(status.json?.received_bytes ?? 0);
      io.err(
        `Resuming the upload of ${saved.manifest}: ${formatBytes(total - missingBytes)} of ${formatBytes(total)} already there, sending the other ${formatBytes(missingBytes)}.`,
      );
    } else if (status.status === 404) {
      status = undefined; // expired or published: start again
      secret = undefined;
    } else {
      // It can never finish (a secret in a part, a stale base, the site gone): say why, and forget it.
      if (status.status >= 400 && status.status < 500 && status.status !== 401 && status.status !== 429) await rm(join(dir, UPLOAD_FILE), { force: true });
      return status;
    }
  }

  if (!status) {
    io.status?.(state ? `Checking which of ${files.length} files changed…` : `Describing ${files.length} files to the service…`);
    const made = await call('POST', 'v1/deploy/manifest', Buffer.from(JSON.stringify({ ...target, files: entries })), { 'Content-Type': 'application/json' });
    if (made.status === 404 && made.json?.error?.message?.startsWith('No endpoint')) return undefined;
    if (made.status !== 201) return made;
    status = made;
    secret = typeof made.json?.manifest_secret === 'string' ? made.json.manifest_secret : undefined;
    const upload: UploadState = { manifest: String(made.json!.manifest), ...(secret !== undefined ? { secret } : {}), fingerprint };
    await writePrivateFile(join(dir, UPLOAD_FILE), `${JSON.stringify(upload)}\n`);
  }
  const manifest = String(status.json!.manifest);
  // Every part says it: whichever arrives last publishes.
  const path = `v1/deploy?manifest=${encodeURIComponent(manifest)}${options.draft ? '&publish=false' : ''}`;

  for (let round = 0; round < 3; round++) {
    const missing = new Set((status.json?.missing as string[] | undefined) ?? []);
    // Each missing content once, at one of its paths.
    const upload = files.filter((file) => missing.delete(file.sha256));
    let answer: ApiAnswer;
    if (upload.length === 0) {
      io.status?.(round === 0 && state ? 'Nothing changed in the files; publishing…' : 'Publishing…');
      answer = await call('POST', path, Buffer.alloc(0));
    } else {
      const bytes = upload.reduce((sum, file) => sum + file.size, 0);
      io.status?.(
        state ? `${upload.length} of ${files.length} files changed (${formatBytes(bytes)})` : `${upload.length} files to upload (${formatBytes(bytes)})`,
      );
      try {
        answer = await sendParts(upload, options, io, (body, compress, onUpload) =>
          call('POST', path, body, { 'Content-Type': compress ? 'application/gzip' : 'application/x-tar' }, onUpload),
        );
      } catch (err) {
        if (!(err instanceof UnreachableError)) throw err;
        throw new UnreachableError(`${err.message}. Run the same deploy again to resume: only what has not arrived will be sent.`);
      }
    }
    if (answer.status === 201 || answer.status === 422) await rm(join(dir, UPLOAD_FILE), { force: true });
    if (answer.status !== 202) return answer;
    // Every part arrived but none published (the last ones raced, or its answer was lost): ask.
    status = await call('GET', `v1/deploy/manifest/${encodeURIComponent(manifest)}`);
    if (status.status !== 200) return status;
  }
  return status;
}

/**
 * Packs and sends the parts, `parallel` at a time, with one progress bar for them all. Answers
 * the publishing part's 201, the first refusal (the other parts still in flight finish; no new
 * one starts), or the last 202 when every part arrived without publishing.
 */
async function sendParts(
  upload: FolderFile[],
  options: PartsOptions,
  io: CommandIo,
  send: (body: Buffer[], compress: boolean, onUpload: (sent: number, total: number) => void) => Promise<ApiAnswer>,
): Promise<ApiAnswer> {
  const parts = splitIntoParts(upload, options.partBytes);
  const total = parts.reduce((sum, part) => sum + part.bytes, 0);
  const sentOf = Array.from({ length: parts.length }, () => 0);
  const show = (): void => {
    const sent = sentOf.reduce((sum, bytes) => sum + bytes, 0);
    io.status?.(
      sent < total
        ? `Uploading ${progressBar(sent, total)} ${formatBytes(sent)} / ${formatBytes(total)} (${upload.length} files in ${parts.length} parts)`
        : 'Publishing…',
    );
  };
  show();
  let next = 0;
  let published: ApiAnswer | undefined;
  let refused: ApiAnswer | undefined;
  let last: ApiAnswer | undefined;
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    // Each lane reads its parts' files into one buffer of its own, free again once a part is sent.
    let room: Buffer | undefined;
    while (next < parts.length && !refused && !published && !failed) {
      const index = next++;
      const part = parts[index]!;
      if (part.bytes <= options.partBytes) room ??= Buffer.allocUnsafeSlow(options.partBytes);
      const packed = await packFiles(part.files, { compress: part.compress, readInto: room });
      const answer = await send(packed.archive, part.compress, (sent, size) => {
        // Progress in content bytes, whatever the packing made of them.
        sentOf[index] = Math.round((part.bytes * sent) / size);
        show();
      });
      sentOf[index] = part.bytes;
      show();
      if (answer.status === 201) published = answer;
      else if (answer.status === 202) last = answer;
      else refused ??= answer;
    }
  };
  const guarded = (): Promise<void> =>
    worker().catch((error: unknown) => {
      // The others finish the part they are sending, and start no other.
      failed ??= { error };
    });
  await Promise.all(Array.from({ length: Math.min(options.parallel ?? DEFAULT_PARALLEL, parts.length) }, guarded));
  if (failed && !published) throw failed.error;
  return published ?? refused ?? last!;
}

async function readUpload(dir: string): Promise<UploadState | undefined> {
  const path = join(dir, UPLOAD_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const saved = JSON.parse(await readFile(path, 'utf8')) as Partial<UploadState>;
    return typeof saved.manifest === 'string' && typeof saved.fingerprint === 'string' && (saved.secret === undefined || typeof saved.secret === 'string')
      ? (saved as UploadState)
      : undefined;
  } catch {
    return undefined;
  }
}
