// Archive format from the first bytes of the body (SPEC 4.1: Content-Type is optional and not
// trusted). Reads only the head of the body.
import { readAt, type BodySource } from './body-source.js';
import { badRequest, type DeployRejected } from './rejection.js';

export type ArchiveFormat = 'tar' | 'tar.gz' | 'zip';

// "ustar\0" (POSIX) and "ustar  \0" (GNU) both start with "ustar" at offset 257.
const TAR_MAGIC_OFFSET = 257;
const HEAD_BYTES = 512;

export const ACCEPTED_FORMATS = '.tar.gz/.tgz, .tar or .zip archive, or JSON with Content-Type: application/json';

export function unsupportedFormat(what: string): DeployRejected {
  return badRequest(`${what} Send a ${ACCEPTED_FORMATS}.`, {
    details: { reason: 'unsupported_format' },
    agentMessage:
      'Send the site as the raw bytes of a .tar.gz, .tar or .zip archive (for example `tar czf - -C ./site . | curl --data-binary @- <api>/v1/deploy`), or as JSON {"files":[{"path","content"}]} with Content-Type: application/json.',
  });
}

export function emptyArchive(): DeployRejected {
  return badRequest('The archive is empty.', {
    agentMessage: 'The uploaded archive contains no files. Archive the site folder itself (with its index.html) and deploy again.',
  });
}

function isAllZero(bytes: Uint8Array): boolean {
  return bytes.every((byte) => byte === 0);
}

/** The archive format the head of a body shows by its magic bytes, or undefined. */
function formatOfHead(head: Buffer): ArchiveFormat | 'empty zip' | undefined {
  if (head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head[0] === 0x50 && head[1] === 0x4b) {
    // Local file header, or the spanning marker some writers put first.
    if ((head[2] === 3 && head[3] === 4) || (head[2] === 7 && head[3] === 8)) return 'zip';
    // An end-of-central-directory record at offset 0 is a zip with no entries at all.
    if (head[2] === 5 && head[3] === 6) return 'empty zip';
  }
  if (head.toString('latin1', TAR_MAGIC_OFFSET, TAR_MAGIC_OFFSET + 5) === 'ustar') return 'tar';
  return undefined;
}

export async function detectArchiveFormat(source: BodySource): Promise<ArchiveFormat> {
  const head = await readAt(source, 0, HEAD_BYTES);
  if (head.length === 0) throw unsupportedFormat('The body is empty.');
  const format = formatOfHead(head);
  if (format === 'empty zip') throw emptyArchive();
  if (format !== undefined) return format;
  // `tar cf x.tar` of nothing writes only zero blocks, which carry no magic.
  if (head.length === HEAD_BYTES && isAllZero(head)) return 'tar';
  throw unsupportedFormat('The body is not a supported archive.');
}

/**
 * An archive sent with a JSON Content-Type: the body fails to parse as JSON, and "send JSON" would
 * send the caller the wrong way. Names the archive and the header instead.
 */
export async function archiveSentAsJson(source: BodySource): Promise<DeployRejected | undefined> {
  const format = formatOfHead(await readAt(source, 0, HEAD_BYTES));
  if (format === undefined) return undefined;
  const kind = format === 'tar.gz' ? 'a gzip (.tar.gz)' : format === 'tar' ? 'a .tar' : 'a .zip';
  return badRequest(`The body is ${kind} archive, but its Content-Type says JSON; nothing was published.`, {
    agentMessage:
      'Content-Type: application/json (or any other JSON type) means the JSON form {"files": [...]}. Send the archive again with any Content-Type that is not JSON ' +
      "(application/octet-stream, or the archive's own type such as application/gzip), or none: its format is recognised by its bytes.",
  });
}
