import busboy from 'busboy';
import type { Readable } from 'node:stream';
import { ServiceError } from '../errors.js';
import { readBody, type BodyLimit, type BodySink } from './body-reader.js';
import type { HeldSink } from './body-sinks.js';
import { refusalOf, refusedIntake, sinkFor, type IntakeOptions, type ReceivedBody } from './intake.js';
import type { HttpResponse } from './uws.js';

/**
 * A `multipart/form-data` upload (RFC 7578), parsed by busboy as it arrives: the text fields are
 * kept, the one file part named `fileField` goes where a body would (the thread's body memory,
 * else a spool file), and the rest is dropped. Busboy hands out parts in the order they come,
 * so the fields a form puts before its file (a form token, a base revision) are known as soon
 * as the file begins (`head`), and an edge can refuse before the file is read.
 */

/** A form's own fields and part headers around its file: room over the limit on the file. */
const FORM_ROOM_BYTES = 64 * 1024;
/** A text field of an upload form (form token, base revision) is short. */
const MAX_FIELD_BYTES = 4096;
/** The fields before the file, with their part headers, fit in this much. */
const FORM_HEAD_BYTES = 64 * 1024;
const MAX_PARTS = 64;

export interface FormOptions extends IntakeOptions {
  /** The request's Content-Type (`multipart/form-data; boundary=…`). */
  contentType: string;
  /** The file kept: the first part of this name that has a file name. */
  fileField: string;
}

/** The text fields a form sent before its first file, and whether a file follows. */
export interface FormHead {
  fields: ReadonlyMap<string, string>;
  /** A file part has begun (the file input left empty, with no file name, does not count). */
  fileFollows: boolean;
}

export type ReceivedFile = ReceivedBody & { filename: string };

export interface FormIntake {
  /** As `Intake.refused`. */
  readonly refused?: Error;
  /** Resolves as soon as the first file part begins, or the form ends without one. */
  head: Promise<FormHead>;
  /** The kept file once the whole form arrived; undefined when the form carried none. */
  done: Promise<ReceivedFile | undefined>;
  discard(): void;
  drain(): Promise<boolean>;
}

/** Whether a body of this Content-Type is read by `receiveForm`. */
export function isMultipartForm(contentType: string | undefined): boolean {
  return /^multipart\/form-data\b/i.test(contentType?.trim() ?? '');
}

const badForm = (message: string): ServiceError => new ServiceError('bad_request', message);
const tooMuchHead = (): ServiceError => badForm('The form sent too much before its file.');

/** Starts receiving a form. Call it synchronously in the handler, as `receiveBody`. */
export function receiveForm(res: HttpResponse, options: FormOptions): FormIntake {
  const { limit } = options;
  // The limit is the file's; the whole body may carry the form's own parts besides.
  const bodyLimit: BodyLimit = {
    maxBytes: limit.maxBytes + FORM_ROOM_BYTES,
    deadlineMs: limit.deadlineMs,
    ...(limit.lingerIdleMs !== undefined ? { lingerIdleMs: limit.lingerIdleMs } : {}),
    tooLarge: () => limit.tooLarge(),
    tooSlow: () => limit.tooSlow(),
  };
  let parser: busboy.Busboy;
  try {
    const refused = refusalOf(options.declaredBytes, bodyLimit);
    if (refused) throw refused;
    parser = busboy({
      headers: { 'content-type': options.contentType },
      limits: { fieldSize: MAX_FIELD_BYTES + 1, parts: MAX_PARTS },
      defParamCharset: 'utf8',
    });
  } catch (err) {
    const refused = err instanceof ServiceError ? err : badForm('The form upload is not valid multipart data.');
    const intake = refusedIntake(res, { ...options, limit: bodyLimit }, refused);
    const head = Promise.reject(refused);
    head.catch(() => undefined);
    const done = intake.done.then(() => undefined);
    done.catch(() => undefined);
    return { ...intake, head, done };
  }

  const fields = new Map<string, string>();
  let headBytes = 0;
  let headSettled = false;
  let resolveHead!: (head: FormHead) => void;
  let rejectHead!: (err: Error) => void;
  const head = new Promise<FormHead>((resolve, reject) => {
    resolveHead = resolve;
    rejectHead = reject;
  });
  head.catch(() => undefined);
  const settleHead = (fileFollows: boolean): void => {
    if (headSettled) return;
    headSettled = true;
    resolveHead({ fields, fileFollows });
  };

  let file: { sink: HeldSink; bytes: number; filename: string } | undefined;
  let failure: Error | undefined;
  // Set once the reader let go of the form; the parser's complaints after that are its own teardown.
  let removed = false;
  const failWith = (err: Error): void => {
    failure ??= err;
    if (!headSettled) {
      headSettled = true;
      rejectHead(failure);
    }
    reading.fail(failure);
  };

  parser.on('field', (name, value, info) => {
    // Only the fields before the file count: one after it could not be checked before the file was read.
    if (headSettled) return;
    if (info.valueTruncated) return failWith(badForm(`The form field ${name.slice(0, 40)} is too long.`));
    // Counted here too, not only by bytes received: a head that came in one chunk is held to the same bound.
    headBytes += name.length + value.length;
    if (headBytes > FORM_HEAD_BYTES) return failWith(tooMuchHead());
    // The file input left empty comes as a field of the file's name: not a field of the form.
    if (name !== options.fileField && !fields.has(name)) fields.set(name, value);
  });
  parser.on('file', (name: string, stream: Readable, info: busboy.FileInfo) => {
    // A part destroyed by a malformed form errors too; the parser reports it.
    stream.on('error', () => undefined);
    // A file input left empty still sends a part, with an empty file name and no bytes.
    if (failure || (name === options.fileField && !info.filename)) return void stream.resume();
    settleHead(true);
    if (name !== options.fileField) return void stream.resume();
    if (file !== undefined) {
      stream.resume();
      return failWith(badForm('Send one archive at a time.'));
    }
    const kept = { sink: sinkFor(options), bytes: 0, filename: info.filename! };
    file = kept;
    stream.on('data', (chunk: Buffer) => {
      if (failure) return;
      try {
        kept.bytes += chunk.byteLength;
        if (kept.bytes > limit.maxBytes) throw limit.tooLarge();
        kept.sink.write(chunk);
      } catch (err) {
        failWith(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
  parser.on('partsLimit', () => failWith(badForm('The form upload has too many parts.')));
  parser.on('error', (err: Error) => {
    if (!removed) failWith(malformed(err));
  });
  parser.on('drain', () => reading.room());

  const sink: BodySink = {
    write(bytes) {
      if (failure) throw failure;
      // Busboy keeps slices of what it is given past this callback: a copy, not uWS's chunk.
      const roomLeft = parser.write(Buffer.from(bytes));
      if (failure) throw failure;
      if (!headSettled && reading.received() > FORM_HEAD_BYTES) throw tooMuchHead();
      return roomLeft;
    },
    end: () =>
      new Promise<void>((resolve, reject) => {
        parser.once('error', (err: Error) => reject(failure ?? malformed(err)));
        parser.once('finish', () => {
          if (failure) return reject(failure);
          file?.sink.end();
          settleHead(false);
          resolve();
        });
        parser.end();
      }),
    remove() {
      removed = true;
      parser.destroy();
      file?.sink.remove();
    },
  };
  const reading = readBody(res, sink, { limit: bodyLimit, pacer: options.pacer });
  reading.done.catch((err: Error) => {
    if (!headSettled) {
      headSettled = true;
      rejectHead(err);
    }
  });

  const done = reading.done.then((): ReceivedFile | undefined => {
    if (file === undefined) return undefined;
    const data = file.sink.bytes();
    return data !== undefined
      ? { bytes: file.bytes, data, filename: file.filename }
      : { bytes: file.bytes, spoolPath: file.sink.path!, filename: file.filename };
  });
  done.catch(() => undefined);
  return {
    head,
    done,
    discard() {
      reading.discard();
      file?.sink.remove();
    },
    drain: reading.drain,
  };
}

function malformed(err: Error): ServiceError {
  if (/unexpected end of (form|file)/i.test(err.message)) return badForm('The form upload ended before its last part.');
  return badForm('The form upload is not valid multipart data.');
}
