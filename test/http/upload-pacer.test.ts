import { afterEach, describe, expect, it, vi } from 'vitest';
import { createUploadPacer } from '../../src/http/index.js';

describe('upload pacer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets uploads run at full speed while the thread is quiet, and paces them while it is busy', () => {
    vi.useFakeTimers();
    let clock = 0;
    const pacer = createUploadPacer({ busyRequestsPerSecond: 100, pacedBytesPerSecond: 1_000_000, now: () => clock });
    const upload = { due: 0 };
    expect(pacer.delayAfter(upload, 500_000)).toBe(0);

    for (let i = 0; i < 20; i++) pacer.noteRequest(); // 20 in 100 ms = 200/s: busy
    vi.advanceTimersByTime(100);
    expect(pacer.delayAfter(upload, 500_000)).toBe(500); // 0.5 MB at 1 MB/s
    clock += 500;
    expect(pacer.delayAfter(upload, 250_000)).toBe(250);

    vi.advanceTimersByTime(100); // no requests in the last sample: quiet again
    expect(pacer.delayAfter(upload, 500_000)).toBe(0);
    pacer.stop();
  });
});
