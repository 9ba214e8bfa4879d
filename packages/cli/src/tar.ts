/**
 * Just enough of a POSIX tar writer for a folder's regular files, so the command needs no
 * package for it: a ustar header per file, and a pax extended header before a file whose path
 * does not fit ustar's 100-byte name field or is not plain ASCII (POSIX.1-2001 `path` record).
 */

const BLOCK = 512;
/** ustar's size field holds 11 octal digits. */
const MAX_SIZE = 8 ** 11 - 1;
const FITS_USTAR = /^[\x20-\x7e]{1,100}$/;

/** The blocks that come before a file's bytes: a pax header if its path needs one, then its own. */
export function entryHeaders(path: string, size: number, mtimeSeconds: number): Buffer[] {
  if (size > MAX_SIZE) throw new Error(`${path} is too large for an archive (${size} bytes)`);
  const headers: Buffer[] = [];
  let name = path;
  if (!FITS_USTAR.test(path)) {
    const records = Buffer.from(paxRecord('path', path), 'utf8');
    headers.push(header('PaxHeader', records.byteLength, mtimeSeconds, 'x'), records, padding(records.byteLength));
    // A reader without pax support still gets a name it can use; pax-aware readers ignore it.
    name = path.replace(/[^\x20-\x7e]/g, '_').slice(-100);
  }
  headers.push(header(name, size, mtimeSeconds, '0'));
  return headers;
}

/** Zero bytes that bring `size` up to a whole block. */
export function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The end of an archive: two zero blocks. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);

/** "<length> path=<value>\n", where the length counts its own digits too. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bytes = Buffer.byteLength(body, 'utf8');
  let digits = 1;
  while (String(bytes + digits).length !== digits) digits++;
  return `${bytes + digits}${body}`;
}

function header(name: string, size: number, mtimeSeconds: number, type: '0' | 'x'): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(0o644, 7), 100, 'ascii');
  block.write(octal(0, 7), 108, 'ascii');
  block.write(octal(0, 7), 116, 'ascii');
  block.write(octal(size, 11), 124, 'ascii');
  block.write(octal(mtimeSeconds, 11), 136, 'ascii');
  block.write(type, 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  // The checksum is the sum of the header's bytes with its own field read as spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'ascii');
  return block;
}

/** A numeric field: `digits` octal digits and a NUL. */
const octal = (value: number, digits: number): string => `${value.toString(8).padStart(digits, '0')}\u0000`;
