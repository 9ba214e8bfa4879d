import { mkdirSync } from 'node:fs';
import {
  declaredLength,
  isMultipartForm,
  receiveBody,
  receiveForm,
  type BodyLimit,
  type BodyMemory,
  type FormIntake,
  type HttpResponse,
  type Intake,
  type RequestCopy,
  type UploadPacer,
} from '../http/index.js';

/**
 * Uploads on the app host (drop to publish), through the same intake as the API's deploy: the
 * same limit and refusals, memory budget, spooling, pacing and deadline. The page's script sends
 * the archive itself as the body; without the script the browser sends a `multipart/form-data`
 * form, parsed as it arrives: its fields come before its file, so the form token and the deploy's
 * admission are checked on the body's first bytes (`FormIntake.head`), before the archive is read.
 */

/** The archive input of the upload form; its id is what error summaries link to. */
export const ARCHIVE_FIELD = 'archive';

export interface UploadOptions {
  /** The one-request limit of deploys (`requestBodyLimit(config, 'rest')`). */
  limit: BodyLimit;
  spool: { dir: string; memory?: BodyMemory };
  pacer?: UploadPacer;
}

/** An upload arriving: a plain form's (fields, then the archive), or the script's (the archive as the body). */
export type Upload = { form: FormIntake; body?: undefined } | { body: Intake; form?: undefined };

/** Starts receiving an upload; call it synchronously in the handler. */
export function startUpload(res: HttpResponse, request: RequestCopy, options: UploadOptions): Upload {
  mkdirSync(options.spool.dir, { recursive: true });
  const contentType = request.headers['content-type'];
  const intake = { limit: options.limit, declaredBytes: declaredLength(request.headers), spool: options.spool, pacer: options.pacer };
  if (isMultipartForm(contentType)) return { form: receiveForm(res, { ...intake, contentType: contentType!, fileField: ARCHIVE_FIELD }) };
  return { body: receiveBody(res, intake) };
}

/** The refusal of a body declared over the limit, to answer before anything else. */
export const uploadRefusal = (upload: Upload): Error | undefined => (upload.form ?? upload.body).refused;

/** Before answering: reads on a little if the body is still arriving (see `Intake.drain`). */
export const drainUpload = (upload: Upload): Promise<boolean> => (upload.form ?? upload.body).drain();

/** Lets go of the upload: its memory, or its spool file. */
export const discardUpload = (upload: Upload): void => (upload.form ?? upload.body).discard();
