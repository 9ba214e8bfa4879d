// Which files the leak guard reads as text, and how it decodes them (SPEC 4.1 rule 6). A key
// saved by a tool that writes UTF-16 (PowerShell's `>` and `Out-File`, Windows Notepad's
// "Unicode", .NET's `Encoding.Unicode`) is the same ASCII key with a NUL after every character,
// which an 8-bit scan never sees, so such files are decoded before the scan. Everything here looks
// at bytes only; it never changes what is stored or served.

// Like git and grep, the head of a file decides.
const SAMPLE_BYTES = 8192;

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

function isTextControl(byte: number): boolean {
  // Tab, LF, VT, FF, CR, ESC (ANSI colours in logs) and backspace appear in real text files.
  return byte === 8 || (byte >= 9 && byte <= 13) || byte === 27;
}

// An 8-bit text: no NUL in the first 8 KB (git's and grep's rule) and up to 30 % odd bytes
// (invalid UTF-8, stray controls), so Latin-1 or Windows-1252 files are scanned too: their
// secrets are ASCII anyway.
export function looksLikeText(bytes: Uint8Array): boolean {
  const length = Math.min(bytes.length, SAMPLE_BYTES);
  if (bytes.subarray(0, length).includes(0)) return false;
  let odd = 0;
  let i = 0;
  while (i < length) {
    const byte = bytes[i]!;
    if (byte < 0x80) {
      if ((byte < 0x20 && !isTextControl(byte)) || byte === 0x7f) odd++;
      i++;
      continue;
    }
    const trail = byte >= 0xc2 && byte <= 0xdf ? 1 : byte >= 0xe0 && byte <= 0xef ? 2 : byte >= 0xf0 && byte <= 0xf4 ? 3 : -1;
    if (trail === -1) {
      odd++;
      i++;
      continue;
    }
    if (i + trail >= length) break; // A character cut by the sample boundary.
    let valid = true;
    for (let k = 1; k <= trail; k++) {
      const next = bytes[i + k]!;
      if (next < 0x80 || next > 0xbf) valid = false;
    }
    if (valid) i += trail + 1;
    else {
      odd++;
      i++;
    }
  }
  return odd * 10 <= length * 3;
}

// The code unit (or code point for UTF-32) at `i` of the sample.
function unitAt(bytes: Uint8Array, i: number, encoding: Exclude<TextEncoding, 'utf-8'>): number {
  switch (encoding) {
    case 'utf-16le':
      return bytes[i]! | (bytes[i + 1]! << 8);
    case 'utf-16be':
      return (bytes[i]! << 8) | bytes[i + 1]!;
    case 'utf-32le':
      return (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)) >>> 0;
    case 'utf-32be':
      return ((bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!) >>> 0;
  }
}

// The same 30 % rule as `looksLikeText`, on the characters of a wide encoding: NUL and other
// controls, unpaired surrogates, U+FFFE/U+FFFF and values past U+10FFFF are odd.
function looksLikeWideText(bytes: Uint8Array, start: number, encoding: Exclude<TextEncoding, 'utf-8'>): boolean {
  const width = encoding === 'utf-16le' || encoding === 'utf-16be' ? 2 : 4;
  const end = start + Math.floor((Math.min(bytes.length, SAMPLE_BYTES) - start) / width) * width;
  let chars = 0;
  let odd = 0;
  for (let i = start; i < end; i += width) {
    const unit = unitAt(bytes, i, encoding);
    chars++;
    if (unit < 0x20 ? !isTextControl(unit) : unit === 0x7f || unit === 0xfffe || unit === 0xffff || unit > 0x10ffff) odd++;
    else if (unit >= 0xd800 && unit <= 0xdfff) {
      if (width === 4 || unit >= 0xdc00) odd++;
      else if (i + 2 * width <= end) {
        const next = unitAt(bytes, i + width, encoding);
        if (next >= 0xdc00 && next <= 0xdfff) i += width;
        else odd++;
      }
    }
  }
  return odd * 10 <= chars * 3;
}

// UTF-16 without a byte-order mark, from where the NULs are. In text, a character below U+0100
// (ASCII, Latin-1) has a zero high byte, and the low byte of a character is zero only for the
// rare U+xx00. So in UTF-16LE text the zeros sit at odd offsets and almost never at even ones,
// and the other way round in UTF-16BE. Binaries (PNG, JPEG, WebAssembly, fonts, archives) have
// their zeros on both sides or hardly any, and pass neither test. At least one character in 16
// must be below U+0100: spaces and line breaks get Cyrillic or CJK prose there, and a key is ASCII.
function utf16ByNulPattern(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const length = Math.min(bytes.length, SAMPLE_BYTES) & ~1;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < length; i += 2) {
    if (bytes[i] === 0) evenZeros++;
    if (bytes[i + 1] === 0) oddZeros++;
  }
  const units = length / 2;
  if (units === 0) return undefined;
  if (oddZeros * 16 >= units && evenZeros * 16 <= oddZeros) return 'utf-16le';
  if (evenZeros * 16 >= units && oddZeros * 16 <= evenZeros) return 'utf-16be';
  return undefined;
}

const startsWith = (bytes: Uint8Array, ...head: number[]): boolean => bytes.length >= head.length && head.every((byte, i) => bytes[i] === byte);

// The byte-order mark's length for an encoding, 0 when there is none.
function markLength(bytes: Uint8Array, encoding: TextEncoding): number {
  switch (encoding) {
    case 'utf-8':
      return startsWith(bytes, 0xef, 0xbb, 0xbf) ? 3 : 0;
    case 'utf-16le':
      return startsWith(bytes, 0xff, 0xfe) ? 2 : 0;
    case 'utf-16be':
      return startsWith(bytes, 0xfe, 0xff) ? 2 : 0;
    case 'utf-32le':
      return startsWith(bytes, 0xff, 0xfe, 0, 0) ? 4 : 0;
    case 'utf-32be':
      return startsWith(bytes, 0, 0, 0xfe, 0xff) ? 4 : 0;
  }
}

/**
 * The encoding of a text file, or undefined for a binary one: a byte-order mark (UTF-32 before
 * UTF-16, whose mark it starts with), else UTF-16 recognised by its NULs, else 8-bit text by
 * `looksLikeText`. A file with a mark still has to read as text in that encoding; random bytes
 * after a mark do (as rare CJK characters), which costs a scan and nothing else.
 */
export function detectTextEncoding(bytes: Uint8Array): TextEncoding | undefined {
  for (const encoding of ['utf-32le', 'utf-32be', 'utf-16le', 'utf-16be'] as const) {
    const mark = markLength(bytes, encoding);
    if (mark > 0) return looksLikeWideText(bytes, mark, encoding) ? encoding : undefined;
  }
  // The common case, a file without NULs, costs one `includes` more than before.
  if (!bytes.subarray(0, SAMPLE_BYTES).includes(0)) return looksLikeText(bytes) ? 'utf-8' : undefined;
  const wide = utf16ByNulPattern(bytes);
  return wide !== undefined && looksLikeWideText(bytes, 0, wide) ? wide : undefined;
}

function decodeUtf32(bytes: Uint8Array, start: number, encoding: 'utf-32le' | 'utf-32be'): string {
  const count = Math.floor((bytes.length - start) / 4);
  // UTF-16LE code units, written byte by byte so the host's byte order does not matter.
  const out = Buffer.allocUnsafe(count * 4);
  let n = 0;
  const put = (unit: number): void => {
    out[n++] = unit & 0xff;
    out[n++] = unit >>> 8;
  };
  for (let i = 0; i < count; i++) {
    const point = unitAt(bytes, start + 4 * i, encoding);
    if (point < 0x10000) put(point >= 0xd800 && point <= 0xdfff ? 0xfffd : point);
    else if (point <= 0x10ffff) {
      put(0xd800 + ((point - 0x10000) >>> 10));
      put(0xdc00 + ((point - 0x10000) & 0x3ff));
    } else put(0xfffd);
  }
  return out.toString('utf16le', 0, n);
}

/**
 * The text of a file as the scanner should read it, without a byte-order mark, or undefined when
 * the file is binary. The scanner reports lines of this text, which are the lines an editor shows.
 */
export function decodeText(bytes: Uint8Array): string | undefined {
  const encoding = detectTextEncoding(bytes);
  if (encoding === undefined) return undefined;
  const start = markLength(bytes, encoding);
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (encoding) {
    case 'utf-8':
      // The mark is kept: it becomes U+FEFF, which no key contains and which starts no line.
      return buffer.toString('utf8');
    case 'utf-16le':
      // A trailing odd byte is dropped, as every decoder does.
      return buffer.toString('utf16le', start, start + ((bytes.length - start) & ~1));
    case 'utf-16be': {
      // Swapped in a copy: the stored bytes stay as they came.
      const swapped = Buffer.from(buffer.subarray(start, start + ((bytes.length - start) & ~1)));
      return swapped.swap16().toString('utf16le');
    }
    default:
      return decodeUtf32(bytes, start, encoding);
  }
}
