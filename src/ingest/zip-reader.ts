// Reads a .zip body through the collector. Zip needs random access (the directory is at the
// end): a large body is spooled to disk, a small one read in memory. Entries are read in central
// directory order; skipped and folder entries are never decompressed.
import yauzl, { type Entry, type ZipFile } from 'yauzl-promise';
import { openBodyReader, type BodyReader, type BodySource } from './body-source.js';
import type { Collector, EntryKind } from './collector.js';
import { damagedArchive, guardArchive } from './damaged.js';
import { emptyArchive } from './format.js';
import { badRequest } from './rejection.js';

const FORMAT = 'zip';
const STORED = 0;
const DEFLATED = 8;
const LOCAL_HEADER_BYTES = 30;
const UTF8_NAME_FLAG = 0x800;
const ENCRYPTED_FLAG = 0x1;

// Unix file type bits of `st_mode`, kept by Info-ZIP and most other writers in the high 16 bits
// of the external attributes.
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;
const S_IFBLK = 0o060000;
const S_IFIFO = 0o010000;
const MSDOS_DIRECTORY = 0x10;

export function zipEntryKind(entry: Pick<Entry, 'filename' | 'externalFileAttributes'>): EntryKind {
  // The type bits are trusted whatever "version made by" claims: a writer that sets them means them.
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
  switch (type) {
    case S_IFLNK:
      return 'symlink';
    case S_IFCHR:
    case S_IFBLK:
      return 'device';
    case S_IFIFO:
      return 'fifo';
    case 0:
    case S_IFREG:
    case S_IFDIR:
      break;
    default:
      return 'other';
  }
  if (type === S_IFDIR || entry.filename.endsWith('/') || (type === 0 && (entry.externalFileAttributes & MSDOS_DIRECTORY) !== 0)) {
    return 'directory';
  }
  return 'file';
}

async function openZip(body: BodySource): Promise<ZipFile> {
  // Names are judged by our own path rules (with their messages), not yauzl's.
  const options = { validateFilenames: false, validateEntrySizes: true };
  try {
    return await ('bytes' in body ? yauzl.fromBuffer(body.bytes, options) : yauzl.open(body.path, options));
  } catch (err) {
    throw damagedArchive(FORMAT, err);
  }
}

function unsupportedEntry(path: string, why: string) {
  return badRequest(`Zip entry ${JSON.stringify(path)} ${why}`, {
    agentMessage: `${path} in the zip ${why} Create the zip again with standard settings (for example \`zip -r site.zip .\`), without a password, and deploy again.`,
    details: { file: path },
  });
}

// What the local header in front of an entry's data says, where it disagrees with the central
// directory, or undefined. Readers that go by the central directory (this one, `unzip`) and those
// that stream the local headers (`unzip` of a pipe, many scanners and proxies) then see different
// files in one archive: a classic way past a check made by the other kind of tool. yauzl reads
// only the lengths there, so the comparison is made here. Sizes and CRC are not compared: with a
// data descriptor (flag bit 3) the local header legitimately leaves them zero.
async function localHeaderMismatch(file: BodyReader, entry: Entry): Promise<string | undefined> {
  const header = await file.readAt(entry.fileHeaderOffset, LOCAL_HEADER_BYTES + entry.filenameLength);
  const bytesRead = header.byteLength;
  if (bytesRead < LOCAL_HEADER_BYTES) return 'is cut off';
  if (header.readUInt16LE(26) !== entry.filenameLength) return 'disagrees with the central directory on the name';
  // The central name as stored: exact for UTF-8 names and for ASCII ones; a legacy code page name
  // with other characters is compared by length only.
  const stored =
    (entry.generalPurposeBitFlag & UTF8_NAME_FLAG) !== 0
      ? Buffer.from(entry.filename, 'utf8')
      : /^[\x20-\x7e]*$/.test(entry.filename)
        ? Buffer.from(entry.filename, 'latin1')
        : undefined;
  if (stored !== undefined && !stored.equals(header.subarray(LOCAL_HEADER_BYTES, bytesRead))) return 'disagrees with the central directory on the name';
  if (header.readUInt16LE(8) !== entry.compressionMethod) return 'disagrees with the central directory on the compression method';
  if ((header.readUInt16LE(6) & ENCRYPTED_FLAG) !== (entry.generalPurposeBitFlag & ENCRYPTED_FLAG)) return 'disagrees with the central directory on encryption';
  return undefined;
}

// yauzl refuses to close while an entry's file stream is open, and an entry stream destroyed
// mid-read (a limit hit) releases its file stream a few ticks later, once the pending read lands.
async function closeZip(zip: ZipFile): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await zip.close();
      return;
    } catch (err) {
      if (attempt >= 200 || !/reading in progress/.test((err as Error).message)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

export async function readZip(body: BodySource, collector: Collector): Promise<void> {
  const zip = await openZip(body);
  let file: BodyReader | undefined;
  let entries = 0;
  try {
    file = await openBodyReader(body);
    while (true) {
      let entry: Entry | null;
      try {
        entry = await zip.readEntry();
      } catch (err) {
        throw damagedArchive(FORMAT, err);
      }
      if (entry === null) break;
      entries++;
      const path = collector.admit(entry.filename, zipEntryKind(entry));
      if (path === undefined) continue;
      if (entry.isEncrypted()) throw unsupportedEntry(path, 'is encrypted.');
      if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
        throw unsupportedEntry(path, `uses compression method ${entry.compressionMethod}; only stored and deflate are supported.`);
      }
      const mismatch = await localHeaderMismatch(file, entry);
      if (mismatch !== undefined) throw damagedArchive(FORMAT, new Error(`the local header of ${JSON.stringify(entry.filename)} ${mismatch}`));
      let stream: NodeJS.ReadableStream & { destroy(): void };
      try {
        stream = await entry.openReadStream();
      } catch (err) {
        throw damagedArchive(FORMAT, err);
      }
      try {
        // yauzl also checks the inflated length against the declared size and the CRC, but the
        // collector's own count is what stops a bomb: it aborts at the first byte over a limit.
        await collector.addFile(path, guardArchive(stream as AsyncIterable<Uint8Array>, FORMAT));
      } finally {
        stream.destroy();
      }
    }
  } finally {
    await file?.close();
    await closeZip(zip);
  }
  if (entries === 0) throw emptyArchive();
}
