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

  it('keeps no timer while no upload is read, and samples from the first one on', () => {
    vi.useFakeTimers();
    let clock = 0;
    const pacer = createUploadPacer({ busyRequestsPerSecond: 100, pacedBytesPerSecond: 1_000_000, now: () => clock });
    expect(vi.getTimerCount()).toBe(0);
    // 100 requests in the second before the upload: 100/s, not above the limit.
    for (let i = 0; i < 100; i++) pacer.noteRequest();
    clock += 1000;
    const upload = { due: 0 };
    expect(pacer.delayAfter(upload, 500_000)).toBe(0);
    expect(vi.getTimerCount()).toBe(1);
    // Busy within the upload: paced from the next sample on.
    for (let i = 0; i < 20; i++) pacer.noteRequest();
    clock += 100;
    vi.advanceTimersByTime(100);
    expect(pacer.delayAfter(upload, 500_000)).toBe(500);
    // The upload is over: one sample later, no timer.
    clock += 100;
    vi.advanceTimersByTime(100);
    clock += 100;
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
    pacer.stop();
  });
});
