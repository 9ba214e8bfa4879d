import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError } from '../errors.js';
import { spoolBody, SpoolError, type HttpResponse, type Spool, type UploadPacer } from '../http/index.js';
import { MAX_REQUEST_BYTES } from '../rules/index.js';

/**
 * Uploads on the app host (drop to publish): the body goes to a spool file as it arrives, as the
 * API's deploy does, never into memory. The page's script sends the archive itself as the body;
 * without the script the browser sends a `multipart/form-data` form, whose archive part is copied
 * out into a file of its own once the body is on disk. The form's fields come before its file,
 * so they are read from the body's first bytes as soon as they arrive (`readFormHead`), and the
 * form token and the deploy's admission are checked before the archive is waited for.
 */

const MB = 1024 * 1024;
/** A form's own fields and part headers around the archive: a little room over the archive cap. */
const MULTIPART_ROOM_BYTES = 64 * 1024;
/** A text field of the upload form (form token, base revision) is short. */
const MAX_FIELD_BYTES = 4096;
const MAX_PART_HEADER_BYTES = 8192;
const READ_CHUNK_BYTES = 256 * 1024;
/** The fields before the archive (token, base revision, their part headers) fit in this much. */
const FORM_HEAD_BYTES = 64 * 1024;

export interface UploadOptions {
  spoolDir: string;
  pacer?: UploadPacer;
  deadlineMs: number;
}

/** An upload being spooled; the handler awaits `spool.done`, the edge cleans up afterwards. */
export interface Upload {
  path: string;
  spool: Spool;
  /** The other files made from it (the archive part of a form). */
  extra: string[];
}

/** The most a drop's request body may carry: the API's one-request cap, plus a form's own parts. */
export const MAX_UPLOAD_BODY_BYTES = MAX_REQUEST_BYTES + MULTIPART_ROOM_BYTES;

export function startUpload(res: HttpResponse, options: UploadOptions): Upload {
  mkdirSync(options.spoolDir, { recursive: true });
  const path = join(options.spoolDir, `${randomUUID()}.app-upload`);
  const spool = spoolBody(res, { path, maxBytes: MAX_UPLOAD_BODY_BYTES, pacer: options.pacer, deadlineMs: options.deadlineMs, keepHeadBytes: FORM_HEAD_BYTES });
  return { path, spool, extra: [] };
}

export async function removeUpload(upload: Upload): Promise<void> {
  upload.spool.discard();
  await Promise.all([upload.path, ...upload.extra].map((file) => unlink(file).catch(() => undefined)));
}

/** The refusal of a body over the one-request cap, in the API's words. */
export function tooLargeUpload(): ServiceError {
  return new ServiceError('too_large', `One upload can carry at most ${MAX_REQUEST_BYTES / MB} MB.`, {
    agentMessage: 'The upload is over 90 MB. Publish the site in parts: a first deploy, then patch deploys (JSON with "patch": true) for the rest.',
  });
}

/** Waits for the whole body; spool failures become the errors a person is shown. */
export async function uploadedBytes(upload: Upload): Promise<number> {
  try {
    const bytes = await upload.spool.done;
    if (bytes > MAX_REQUEST_BYTES) throw tooLargeUpload();
    return bytes;
  } catch (err) {
    throw spoolFailure(err);
  }
}

function spoolFailure(err: unknown): unknown {
  if (err instanceof SpoolError && err.reason === 'too_large') return tooLargeUpload();
  if (err instanceof SpoolError && err.code === 'bad_request') return new ServiceError('bad_request', err.message, { agentMessage: err.agentMessage });
  return err;
}

/** The text fields a form sent before its first file, and whether a file follows. */
export interface FormHead {
  fields: Map<string, string>;
  /** A file part has begun (the archive input left empty, with no file name, does not count). */
  fileFollows: boolean;
}

/**
 * Waits only for the start of a `multipart/form-data` upload: the text fields before its first
 * file part. A browser sends fields in the order of the form, and the drop form puts its token
 * and base revision before the file, so a refusal costs no more than those bytes.
 */
export async function readFormHead(upload: Upload, boundary: string, fileField: string): Promise<FormHead> {
  let want = 1;
  for (;;) {
    let head;
    try {
      head = await upload.spool.head(want);
    } catch (err) {
      throw spoolFailure(err);
    }
    const parsed = parseFormHead(head.bytes, boundary, fileField, head.ended);
    if (parsed !== undefined) return parsed;
    if (head.bytes.length >= FORM_HEAD_BYTES) throw badForm('The form sent too much before its archive.');
    want = head.bytes.length + 1;
  }
}

/**
 * The fields of a form's start (RFC 7578) up to its first file part, or undefined while more of
 * the body is needed. Pure: `bytes` is the body's start, `ended` whether it is the whole body.
 */
export function parseFormHead(bytes: Buffer, boundary: string, fileField: string, ended: boolean): FormHead | undefined {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The body starts with `--boundary`: a CRLF in front makes every delimiter look alike.
  const body = Buffer.concat([Buffer.from('\r\n'), bytes]);
  const fields = new Map<string, string>();
  const more = (): undefined => {
    if (ended) throw badForm('The form upload ended before its last part.');
    return undefined;
  };
  let at = body.indexOf(delimiter);
  if (at === -1) return more();
  for (;;) {
    let cursor = at + delimiter.length;
    if (body.length < cursor + 2) return more();
    if (body.subarray(cursor, cursor + 2).toString('latin1') === '--') return { fields, fileFollows: false };
    const lineEnd = body.indexOf('\r\n', cursor);
    if (lineEnd === -1) {
      if (body.length - cursor > 256) throw badForm('The form upload is not valid multipart data.');
      return more();
    }
    // Transport padding (spaces, tabs) may follow a delimiter.
    if (body.subarray(cursor, lineEnd).toString('latin1').trim() !== '') throw badForm('The form upload is not valid multipart data.');
    cursor = lineEnd + 2;
    const headersEnd = body.indexOf('\r\n\r\n', cursor);
    if (headersEnd === -1) {
      if (body.length - cursor > MAX_PART_HEADER_BYTES) throw badForm('The form upload is not valid multipart data.');
      return more();
    }
    const headers = body.subarray(cursor, headersEnd).toString('utf8');
    const disposition = /^content-disposition:\s*form-data(.*)$/im.exec(headers)?.[1] ?? '';
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw badForm('A part of the form upload has no name.');
    const filename = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1];
    // The first file ends the head; only the archive input left empty (no file name) is read past.
    if (filename !== undefined && (name !== fileField || filename !== '')) return { fields, fileFollows: true };
    const next = body.indexOf(delimiter, headersEnd + 4);
    if (next === -1) {
      if (body.length - (headersEnd + 4) > MAX_FIELD_BYTES) throw badForm(`The form field ${name.slice(0, 40)} is too long.`);
      return more();
    }
    const value = body.subarray(headersEnd + 4, next);
    if (filename === undefined) {
      if (value.length > MAX_FIELD_BYTES) throw badForm(`The form field ${name.slice(0, 40)} is too long.`);
      if (!fields.has(name)) fields.set(name, value.toString('utf8'));
    }
    at = next;
  }
}

export interface FormUpload {
  fields: Map<string, string>;
  /** The archive part, copied to a file of its own; absent when the form carried no file. */
  file?: { path: string; bytes: number; filename: string };
}

/** The boundary of a `multipart/form-data` body, or undefined for any other type. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : undefined;
}

const badForm = (message: string): ServiceError => new ServiceError('bad_request', message);

/**
 * Reads a spooled `multipart/form-data` body (RFC 7578): short text fields are kept, the one part
 * named `fileField` is copied into a file beside the spool. Streams through the file with a carry
 * of one delimiter's length, so the archive is never held in memory.
 */
export async function readFormUpload(upload: Upload, boundary: string, fileField: string): Promise<FormUpload> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const source = await open(upload.path, 'r');
  const fields = new Map<string, string>();
  let file: FormUpload['file'];
  let out: Awaited<ReturnType<typeof open>> | undefined;
  // The body starts with `--boundary`: a CRLF in front makes every delimiter look alike.
  let buffer: Buffer = Buffer.from('\r\n');
  let state = 'preamble' as 'preamble' | 'after-delimiter' | 'headers' | 'body';
  let part: { name: string; filename?: string; text: Buffer[]; textBytes: number } | undefined;
  let eof = false;
  const chunk = Buffer.alloc(READ_CHUNK_BYTES);

  const emit = async (data: Buffer): Promise<void> => {
    if (!part || data.length === 0) return;
    if (part.filename !== undefined && part.name === fileField) {
      await out!.write(data);
      file!.bytes += data.length;
      return;
    }
    if (part.filename !== undefined) return; // another file input: ignored
    part.textBytes += data.length;
    if (part.textBytes > MAX_FIELD_BYTES) throw badForm(`The form field ${part.name.slice(0, 40)} is too long.`);
    part.text.push(Buffer.from(data));
  };
  const endPart = (): void => {
    if (part && part.filename === undefined && !fields.has(part.name)) fields.set(part.name, Buffer.concat(part.text).toString('utf8'));
    part = undefined;
  };

  try {
    for (;;) {
      if (!eof && buffer.length < READ_CHUNK_BYTES) {
        const { bytesRead } = await source.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) eof = true;
        else buffer = Buffer.concat([buffer, chunk.subarray(0, bytesRead)]);
      }
      if (state === 'preamble' || state === 'body') {
        const at = buffer.indexOf(delimiter);
        if (at === -1) {
          if (eof) throw badForm('The form upload ended before its last part.');
          const keep = delimiter.length - 1;
          if (state === 'body') await emit(buffer.subarray(0, Math.max(0, buffer.length - keep)));
          buffer = buffer.subarray(Math.max(0, buffer.length - keep));
          continue;
        }
        if (state === 'body') await emit(buffer.subarray(0, at));
        endPart();
        buffer = buffer.subarray(at + delimiter.length);
        state = 'after-delimiter';
      }
      if (state === 'after-delimiter') {
        if (buffer.length < 2 && !eof) continue;
        if (buffer.subarray(0, 2).toString('latin1') === '--') break;
        const lineEnd = buffer.indexOf('\r\n');
        if (lineEnd === -1) {
          if (eof || buffer.length > 256) throw badForm('The form upload is not valid multipart data.');
          continue;
        }
        // Transport padding (spaces, tabs) may follow a delimiter.
        if (buffer.subarray(0, lineEnd).toString('latin1').trim() !== '') throw badForm('The form upload is not valid multipart data.');
        buffer = buffer.subarray(lineEnd + 2);
        state = 'headers';
      }
      if (state === 'headers') {
        const end = buffer.indexOf('\r\n\r\n');
        if (end === -1) {
          if (eof || buffer.length > MAX_PART_HEADER_BYTES) throw badForm('The form upload is not valid multipart data.');
          continue;
        }
        const headers = buffer.subarray(0, end).toString('utf8');
        buffer = buffer.subarray(end + 4);
        const disposition = /^content-disposition:\s*form-data(.*)$/im.exec(headers)?.[1] ?? '';
        const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
        if (name === undefined) throw badForm('A part of the form upload has no name.');
        const filename = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1];
        part = { name, filename, text: [], textBytes: 0 };
        if (filename !== undefined && name === fileField) {
          if (file) throw badForm('Send one archive at a time.');
          const path = `${upload.path}.archive`;
          upload.extra.push(path);
          out = await open(path, 'wx', 0o600);
          file = { path, bytes: 0, filename };
        }
        state = 'body';
      }
    }
  } finally {
    await source.close();
    await out?.close();
  }
  // A file input left empty still sends a part, with an empty file name and no bytes.
  if (file && file.bytes === 0 && file.filename === '') file = undefined;
  return file ? { fields, file } : { fields };
}
