// Inline JSON deploys (SPEC 4.2): parse the body, validate it against the contract's JsonDeploy, decode
// each file and hand it to the same collector as archive entries. Runs in the worker because a
// JSON.parse of a 90 MB body would stall an HTTP thread for a noticeable time.
import { compileBodyCheck, JsonDeploy, problemDetails, type BodyCheck } from '../contract/index.js';
import { checkArchivePath } from './archive-path.js';
import { readBodyText, type BodySource } from './body-source.js';
import type { Collector } from './collector.js';
import { archiveSentAsJson } from './format.js';
import { badRequest } from './rejection.js';
import type { JsonDeployFields } from './types.js';

/** A file with its content, or (digest deploys) only its size and sha256 for content the site has. */
type InlineFile = { path: string; content: string; encoding?: 'utf8' | 'base64' } | { path: string; sha256: string; size: number };

/** Each item carries its content, or (only) the sha256 and size of content the site already has. */
function checkItemForm(file: Record<string, unknown>, index: number): void {
  const hasContent = file.content !== undefined;
  const isReference = file.sha256 !== undefined && file.size !== undefined;
  const partial = file.sha256 !== undefined || file.size !== undefined;
  if (hasContent === isReference || (hasContent && partial)) {
    throw badRequest(`files[${index}] needs either "content", or "sha256" and "size" (for content the site already has), not both.`, {
      agentMessage: 'Send each file as {"path", "content", "encoding"?}, or, for content the site already has, as {"path", "sha256", "size"} from list_files.',
      details: { index },
    });
  }
}

interface InlineDeploy extends JsonDeployFields {
  files: InlineFile[];
}

// Compiled on first use, not at import (importing a module does nothing).
let checkJsonDeploy: BodyCheck | undefined;

// V8 quotes a slice of the input in some messages ("Unexpected token 'x', "...{x" is not valid
// JSON"); the body may hold a secret key, so the quote is dropped.
function describeParseError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const quoted = message.indexOf(', "');
  return quoted === -1 ? message : message.slice(0, quoted);
}

// Standard alphabet with padding. Line breaks are allowed because `base64` and MIME tools wrap
// at 76 columns; anything else (spaces, URL-safe letters, junk) is refused, not skipped, since
// Buffer.from would silently drop it and publish different bytes.
// Checked without a repeating group so that a 50 MB string costs one linear scan.
function isStrictBase64(text: string): boolean {
  if (text.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(text)) return false;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return text.indexOf('=') === -1 || text.indexOf('=') === text.length - padding;
}

function decodeContent(file: Extract<InlineFile, { content: string }>, index: number): Buffer {
  if (file.encoding !== 'base64') return Buffer.from(file.content, 'utf8');
  const compact = file.content.includes('\n') ? file.content.replace(/\r?\n/g, '') : file.content;
  if (!isStrictBase64(compact)) {
    throw badRequest(`files[${index}].content is not valid base64.`, {
      agentMessage: `files[${index}] (${file.path}) says encoding "base64" but its content is not standard base64 (A-Z, a-z, 0-9, +, / with = padding). Encode the file again, or send text with encoding "utf8".`,
      details: { file: file.path },
    });
  }
  return Buffer.from(compact, 'base64');
}

function normaliseDeleted(deleted: string[]): string[] {
  return deleted.map((raw, index) => {
    const checked = checkArchivePath(raw);
    if (!checked.ok) throw badRequest(`deleted[${index}]: ${checked.reason}`, { details: { file: raw } });
    return checked.path;
  });
}

async function parseBody(source: BodySource): Promise<InlineDeploy> {
  let body: unknown;
  {
    // Scoped so the 90 MB string can be collected as soon as it is parsed.
    const text = await readBodyText(source);
    try {
      body = JSON.parse(text);
    } catch (err) {
      const archive = await archiveSentAsJson(source);
      if (archive) throw archive;
      throw badRequest(`Body is not valid JSON: ${describeParseError(err)}`, {
        agentMessage:
          'The request body is not valid JSON. Send {"files":[{"path":"index.html","content":"..."}]} encoded as JSON with Content-Type: application/json.',
      });
    }
  }
  checkJsonDeploy ??= compileBodyCheck(JsonDeploy);
  const problem = checkJsonDeploy(body);
  if (problem !== undefined) {
    throw badRequest(problem.message, {
      details: problemDetails(problem),
      agentMessage:
        'The JSON body must look like {"files":[{"path":"index.html","content":"<html>…","encoding":"utf8"}], "site"?: "<name>", "base_revision"?: "<revision id>", "patch"?: true, "deleted"?: ["old.html"]}. Fix the field named in the error and retry.',
    });
  }
  return body as InlineDeploy;
}

export async function readJsonDeploy(source: BodySource, collector: Collector): Promise<JsonDeployFields> {
  const body = await parseBody(source);
  const patch = body.patch === true;
  if (body.deleted !== undefined && !patch) {
    throw badRequest('deleted is only allowed with patch: true.', {
      agentMessage:
        'A full deploy replaces the whole site, so "deleted" has no meaning there. Send "patch": true with "base_revision" to remove files, or leave out the files you no longer want.',
    });
  }
  const deleted = body.deleted === undefined ? undefined : normaliseDeleted(body.deleted);

  const files = body.files;
  if (deleted !== undefined) {
    const sent = new Set(
      files.flatMap((file) => {
        const checked = checkArchivePath(file.path);
        return checked.ok ? [checked.path] : [];
      }),
    );
    const both = deleted.find((path) => sent.has(path));
    if (both !== undefined) {
      throw badRequest(`Path ${JSON.stringify(both)} is both in files and in deleted.`, { details: { file: both } });
    }
  }

  for (let i = 0; i < files.length; i++) {
    const file = files[i]!;
    checkItemForm(file as Record<string, unknown>, i);
    const path = collector.admit(file.path, 'file');
    if (path === undefined) continue;
    if (!('content' in file)) {
      collector.addReference(path, file.sha256, file.size);
      continue;
    }
    const bytes = decodeContent(file, i);
    // Drop the decoded string early: the parsed body holds every file's content until then.
    file.content = '';
    await collector.addBytes(path, bytes);
  }

  const fields: JsonDeployFields = {};
  if (body.site !== undefined) fields.site = body.site;
  if (body.base_revision !== undefined) fields.base_revision = body.base_revision;
  if (body.patch !== undefined) fields.patch = body.patch;
  if (body.publish !== undefined) fields.publish = body.publish;
  if (deleted !== undefined) fields.deleted = deleted;
  if (body.manifest !== undefined) fields.manifest = body.manifest;
  if (body.idempotency_key !== undefined) fields.idempotency_key = body.idempotency_key;
  return fields;
}
