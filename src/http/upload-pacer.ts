/**
 * Visitors first: while an HTTP thread is busy serving, request bodies on that thread are read at
 * a paced rate instead of as fast as the client sends. Receiving 90 MB over TCP costs real CPU
 * (on 2 saturated cores it triples a page's p99 even for a server that discards the bytes), so
 * under load an upload takes longer rather than slowing every visitor on the thread; when the
 * thread is quiet, uploads run at full speed.
 */
export interface UploadPacer {
  /** Counts one served request (cheap: an increment). */
  noteRequest(): void;
  /** Milliseconds to pause before reading more, after `bytes` more were read by one upload. */
  delayAfter(upload: PacedUpload, bytes: number): number;
  stop(): void;
}

/** Per-upload pacing state. */
export interface PacedUpload {
  /** When this upload may have read its next byte, at the paced rate (ms, monotonic). */
  due: number;
}

export interface UploadPacerOptions {
  /** Above this many served requests per second on the thread, uploads are paced. */
  busyRequestsPerSecond: number;
  /** Paced intake per upload, bytes per second. */
  pacedBytesPerSecond: number;
  now?: () => number;
}

const SAMPLE_MS = 100;

export function createUploadPacer(options: UploadPacerOptions): UploadPacer {
  const now = options.now ?? (() => performance.now());
  let requests = 0;
  let busy = false;
  // The thread's request rate is sampled only while uploads are read: a timer ten times a second
  // on an idle thread is CPU a bare server does not spend (bench/RESULTS.md, "Serving back at the
  // ceiling"). The first sample of an upload covers the time since the last one.
  let sampledAt = now();
  let timer: ReturnType<typeof setInterval> | undefined;
  let uploadSeen = false;
  const sample = (): void => {
    const at = now();
    busy = (requests * 1000) / Math.max(at - sampledAt, SAMPLE_MS) > options.busyRequestsPerSecond;
    requests = 0;
    sampledAt = at;
  };
  const tick = (): void => {
    sample();
    if (!uploadSeen) {
      clearInterval(timer);
      timer = undefined;
    }
    uploadSeen = false;
  };

  return {
    noteRequest() {
      requests++;
    },
    delayAfter(upload, bytes) {
      uploadSeen = true;
      if (timer === undefined) {
        sample();
        timer = setInterval(tick, SAMPLE_MS);
        timer.unref();
      }
      const at = now();
      if (!busy) {
        upload.due = at;
        return 0;
      }
      upload.due = Math.max(upload.due, at) + (bytes / options.pacedBytesPerSecond) * 1000;
      return Math.max(0, upload.due - at);
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
