// In-memory archive writers for tests that make thousands of archives (chaos, fuzzing), where
// spawning `tar`/`zip` or writing temp files would dominate the run time. Plain ustar and plain
// zip (stored or deflated), nothing exotic: hostile variants are made by mutating these bytes.
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';

export type ArchiveFiles = ReadonlyArray<readonly [path: string, content: Uint8Array | string]>;

const bytesOf = (content: Uint8Array | string): Buffer => (typeof content === 'string' ? Buffer.from(content) : Buffer.from(content));

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** One 512-byte ustar header; a name over 100 bytes goes in the 155-byte prefix or a pax record. */
function tarHeader(path: string, size: number, type = '0'): Buffer {
  const header = Buffer.alloc(512);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = path.lastIndexOf('/', 155);
    if (cut > 0 && Buffer.byteLength(path.slice(cut + 1)) <= 100) {
      prefix = path.slice(0, cut);
      name = path.slice(cut + 1);
    } else {
      name = 'PaxHeader';
    }
  }
  header.write(name, 0, 100, 'utf8');
  header.write(octal(0o644, 8), 100, 'ascii');
  header.write(octal(0, 8), 108, 'ascii');
  header.write(octal(0, 8), 116, 'ascii');
  header.write(octal(size, 12), 124, 'ascii');
  header.write(octal(0, 12), 136, 'ascii');
  header.write('        ', 148, 'ascii');
  header.write(type, 156, 'ascii');
  header.write('ustar\u000000', 257, 'binary');
  header.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(octal(sum, 7) + ' ', 148, 'ascii');
  return header;
}

function fitsUstar(path: string): boolean {
  const cut = path.lastIndexOf('/', 155);
  return cut > 0 && Buffer.byteLength(path.slice(cut + 1)) <= 100 && Buffer.byteLength(path.slice(0, cut)) <= 155;
}

/** `<length> <key>=<value>\n`, where the length counts itself. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return Buffer.from(`${length}${body}`);
}

/** An uncompressed ustar archive (pax records for long names). */
export function tarBytes(files: ArchiveFiles): Buffer {
  const parts: Buffer[] = [];
  const pad = (length: number): Buffer => Buffer.alloc((512 - (length % 512)) % 512);
  for (const [path, content] of files) {
    const bytes = bytesOf(content);
    if (Buffer.byteLength(path) > 100 && !fitsUstar(path)) {
      const record = paxRecord('path', path);
      parts.push(tarHeader('PaxHeader', record.byteLength, 'x'), record, pad(record.byteLength));
    }
    parts.push(tarHeader(path, bytes.byteLength), bytes, pad(bytes.byteLength));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export function tgzBytes(files: ArchiveFiles): Buffer {
  return gzipSync(tarBytes(files));
}

/** A zip archive; files of 64 bytes and more are deflated, smaller ones stored. */
export function zipBytes(files: ArchiveFiles): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [path, content] of files) {
    const bytes = bytesOf(content);
    const name = Buffer.from(path);
    const deflate = bytes.byteLength >= 64;
    const data = deflate ? deflateRawSync(bytes) : bytes;
    const crc = crc32(bytes);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.byteLength, 18);
    local.writeUInt32LE(bytes.byteLength, 22);
    local.writeUInt16LE(name.byteLength, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(0x031e, 4); // made by Unix, so external attributes carry the file mode
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(0x0800, 8);
    entry.writeUInt16LE(deflate ? 8 : 0, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(data.byteLength, 20);
    entry.writeUInt32LE(bytes.byteLength, 24);
    entry.writeUInt16LE(name.byteLength, 28);
    entry.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    central.push(entry, name);
    offset += local.byteLength + name.byteLength + data.byteLength;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.byteLength, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
