/**
 * A page's bytes as the text the HTML parser sees, with a way back from text offsets to byte
 * offsets and from our own markup to bytes. Used by the badge placement, which parses in text and
 * splices in bytes so that nothing of the page is re-encoded.
 *
 * Pages are served as `text/html; charset=utf-8`, and for such a response a browser decodes
 * with that charset unless the bytes start with a byte-order mark, which wins over the header
 * (WHATWG Encoding, "decode"; HTML "encoding sniffing algorithm" step 1). So:
 * - no BOM: the page is read as latin1, one character per byte, so text offsets are byte
 *   offsets. Every byte the tokenizer treats specially is ASCII, and a UTF-8 decoder never
 *   swallows an ASCII byte into a multibyte sequence, so the tree built from this view is the one
 *   the browser builds from UTF-8, only with other (opaque) characters in text and names.
 * - UTF-8 BOM: the same, after the three BOM bytes, which the browser drops before parsing.
 * - UTF-16 BOM: the browser reads UTF-16, where ASCII bytes of ours would decode to unrelated
 *   characters and the badge would vanish, so the page is decoded as UTF-16 and our markup is
 *   encoded the same way.
 */
export interface PageText {
  /** The characters the tokenizer sees, BOM removed. */
  text: string;
  /** Byte offset in the page of a text offset. */
  byteOffset(textOffset: number): number;
  /** Our markup (ASCII, or names copied out of `text`) as bytes of the page's encoding. */
  encode(markup: string): Buffer;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

function startsWith(bytes: Buffer, prefix: readonly number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}

function swapPairs(bytes: Buffer): Buffer {
  // An odd last byte cannot be a UTF-16 unit; the browser turns it into U+FFFD after everything
  // else, so it is left out of the text and stays in place after any insertion.
  const even = Buffer.from(bytes.subarray(0, bytes.length - (bytes.length % 2)));
  return even.swap16();
}

export function readPageText(bytes: Buffer): PageText {
  if (startsWith(bytes, UTF8_BOM)) {
    return { text: bytes.toString('latin1', 3), byteOffset: (at) => at + 3, encode: (markup) => Buffer.from(markup, 'latin1') };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { text: bytes.toString('utf16le', 2), byteOffset: (at) => 2 + at * 2, encode: (markup) => Buffer.from(markup, 'utf16le') };
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    return {
      text: swapPairs(bytes.subarray(2)).toString('utf16le'),
      byteOffset: (at) => 2 + at * 2,
      encode: (markup) => Buffer.from(markup, 'utf16le').swap16(),
    };
  }
  return { text: bytes.toString('latin1'), byteOffset: (at) => at, encode: (markup) => Buffer.from(markup, 'latin1') };
}
