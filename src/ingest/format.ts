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

export async function detectArchiveFormat(source: BodySource): Promise<ArchiveFormat> {
  const head = await readAt(source, 0, HEAD_BYTES);
  if (head.length === 0) throw unsupportedFormat('The body is empty.');
  if (head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head[0] === 0x50 && head[1] === 0x4b) {
    // Local file header, or the spanning marker some writers put first.
    if ((head[2] === 3 && head[3] === 4) || (head[2] === 7 && head[3] === 8)) return 'zip';
    // An end-of-central-directory record at offset 0 is a zip with no entries at all.
    if (head[2] === 5 && head[3] === 6) throw emptyArchive();
  }
  if (head.toString('latin1', TAR_MAGIC_OFFSET, TAR_MAGIC_OFFSET + 5) === 'ustar') return 'tar';
  // `tar cf x.tar` of nothing writes only zero blocks, which carry no magic.
  if (head.length === HEAD_BYTES && isAllZero(head)) return 'tar';
  throw unsupportedFormat('The body is not a supported archive.');
}
