import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBodyMemory } from '../../src/http/index.js';

const MiB = 1024 * 1024;

describe('body memory: buffers kept for the next body', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    // [body bytes, capacity of the buffer it gets, owned (may move to a worker and back)]
    [1000, 1000, false],
    [MiB - 1, MiB - 1, false],
    [MiB, MiB, true],
    [MiB + 1, 2 * MiB, true],
    [16 * MiB + 16_896, 17 * MiB, true],
  ])('a body of %i bytes gets a view of %i bytes of buffer (owned: %s)', (bytes, capacity, owned) => {
    const memory = createBodyMemory({ budgetBytes: 128 * MiB, maxBodyBytes: 32 * MiB });
    const body = memory.take(bytes);
    expect(body.byteLength).toBe(bytes);
    expect(body.byteOffset).toBe(0);
    expect(body.buffer.byteLength).toBe(capacity);
    expect(memory.owns(body.buffer)).toBe(owned);
  });

  it('gives a buffer that came back to the next body that fits, the smallest first', () => {
    const memory = createBodyMemory({ budgetBytes: 128 * MiB, maxBodyBytes: 32 * MiB });
    const large = memory.take(20 * MiB).buffer as ArrayBuffer;
    const small = memory.take(3 * MiB).buffer as ArrayBuffer;
    memory.recycle(large);
    memory.recycle(small);
    expect(memory.stats().keptBytes).toBe(23 * MiB);

    expect(memory.take(2 * MiB).buffer).toBe(small);
    expect(memory.take(2 * MiB).buffer).toBe(large);
    // Nothing kept fits any more: a new buffer.
    const fresh = memory.take(2 * MiB).buffer;
    expect(fresh).not.toBe(small);
    expect(fresh).not.toBe(large);
    expect(memory.stats()).toMatchObject({ keptBytes: 0, buffersReused: 2 });
  });

  it('adopts a buffer handed back by a worker (a new object over the moved memory)', () => {
    const memory = createBodyMemory({ budgetBytes: 128 * MiB, maxBodyBytes: 32 * MiB });
    const moved = new ArrayBuffer(4 * MiB);
    expect(memory.owns(moved)).toBe(false);
    memory.recycle(moved);
    const body = memory.take(4 * MiB);
    expect(body.buffer).toBe(moved);
    expect(memory.owns(moved)).toBe(true);
  });

  it.each([
    ['a buffer still in use elsewhere (detached: no bytes)', new ArrayBuffer(0)],
    ['a small buffer', new ArrayBuffer(64 * 1024)],
  ])('does not keep %s', (_name, buffer) => {
    const memory = createBodyMemory({ budgetBytes: 128 * MiB, maxBodyBytes: 32 * MiB });
    memory.recycle(buffer);
    expect(memory.stats().keptBytes).toBe(0);
  });

  it('keeps no more than its budget', () => {
    const memory = createBodyMemory({ budgetBytes: 40 * MiB, maxBodyBytes: 32 * MiB });
    for (let i = 0; i < 4; i++) memory.recycle(new ArrayBuffer(17 * MiB));
    expect(memory.stats().keptBytes).toBe(34 * MiB);
  });

  it('lets kept buffers go once no body came for a while', () => {
    vi.useFakeTimers();
    const memory = createBodyMemory({ budgetBytes: 128 * MiB, maxBodyBytes: 32 * MiB, keepMs: 1000 });
    memory.recycle(new ArrayBuffer(17 * MiB));
    vi.advanceTimersByTime(900);
    memory.recycle(new ArrayBuffer(17 * MiB)); // activity: kept for another while
    vi.advanceTimersByTime(900);
    expect(memory.stats().keptBytes).toBe(34 * MiB);
    vi.advanceTimersByTime(200);
    expect(memory.stats().keptBytes).toBe(0);
  });
});
