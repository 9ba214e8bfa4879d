import { describe, expect, it } from 'vitest';
import { cacheControlFor, joinAfterFirst, newBlockSlabs, packedAfterFirst, type HeaderList } from '../../src/serve/headers.js';

describe('cacheControlFor', () => {
  it.each([
    ['text/html; charset=utf-8', 'public, max-age=60'],
    ['text/html', 'public, max-age=60'],
    ['TEXT/HTML', 'public, max-age=60'],
    ['text/css; charset=utf-8', 'public, max-age=300'],
    ['image/png', 'public, max-age=300'],
    ['application/octet-stream', 'public, max-age=300'],
    ['', 'public, max-age=300'],
  ])('gives %j %s', (type, expected) => {
    expect(cacheControlFor(type)).toBe(expected);
  });
});

describe('packedAfterFirst', () => {
  const list = (etag: string): HeaderList => [
    ['Content-Type', 'text/html; charset=utf-8'],
    ['Cache-Control', 'public, max-age=60'],
    ['ETag', etag],
  ];

  it('gives the bytes of joinAfterFirst, side by side in one shared buffer', () => {
    const slabs = newBlockSlabs();
    const blocks = ['"a"', '"b"', '"c"'].map((etag) => packedAfterFirst(list(etag), slabs));
    blocks.forEach((block, i) => expect(block.equals(joinAfterFirst(list(['"a"', '"b"', '"c"'][i]!)))).toBe(true));
    expect(blocks[1]!.buffer).toBe(blocks[0]!.buffer);
    expect(blocks[1]!.byteOffset).toBe(blocks[0]!.byteOffset + blocks[0]!.byteLength);
    // A small first slab, counted whole.
    expect(slabs.bytes).toBe(blocks[0]!.buffer.byteLength);
    expect(slabs.bytes).toBeLessThanOrEqual(1024);
  });

  it('starts a new buffer when one is full, larger up to 16 KB, gives a large block one of its own, and counts them all', () => {
    const slabs = newBlockSlabs();
    const blocks = Array.from({ length: 400 }, (_, i) => packedAfterFirst(list(`"${i}"`), slabs));
    blocks.forEach((block, i) => expect(block.toString('latin1')).toBe(joinAfterFirst(list(`"${i}"`)).toString('latin1')));
    const buffers = [...new Set(blocks.map((block) => block.buffer))];
    expect(buffers.length).toBeGreaterThan(1);
    expect(Math.max(...buffers.map((buffer) => buffer.byteLength))).toBe(16 * 1024);
    expect(slabs.bytes).toBe(buffers.reduce((sum, buffer) => sum + buffer.byteLength, 0));
    const before = slabs.bytes;
    const large = packedAfterFirst(
      [
        ['Content-Type', 'text/plain'],
        ['X-Long', 'x'.repeat(8000)],
      ],
      slabs,
    );
    expect(
      large.equals(
        joinAfterFirst([
          ['Content-Type', 'text/plain'],
          ['X-Long', 'x'.repeat(8000)],
        ]),
      ),
    ).toBe(true);
    expect(blocks.some((block) => block.buffer === large.buffer)).toBe(false);
    expect(slabs.bytes - before).toBe(large.byteLength);
  });
});
