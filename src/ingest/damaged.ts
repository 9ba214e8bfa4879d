// Errors raised while parsing an uploaded archive are the uploader's problem (400), unlike I/O
// faults of our own disk (500). Parser errors are caught where the parser is called and turned
// into `bad_request` here; everything else propagates as a real fault.
import { badRequest, DeployRejected } from './rejection.js';

export function damagedArchive(format: string, err: unknown): DeployRejected {
  if (err instanceof DeployRejected) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return badRequest(`The ${format} archive is damaged or truncated: ${reason}`, {
    agentMessage: `The uploaded ${format} archive could not be read (${reason}). Create it again from the site folder and make sure the whole file is sent as the request body.`,
  });
}

// Passes items through, turning any error of the source itself into `damagedArchive`.
export async function* guardArchive<T>(source: AsyncIterable<T>, format: string): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    while (true) {
      let step: IteratorResult<T>;
      try {
        step = await iterator.next();
      } catch (err) {
        throw damagedArchive(format, err);
      }
      if (step.done) return;
      yield step.value;
    }
  } finally {
    // Stopping early (a limit, a rejected entry) must release the stream underneath; after a
    // source error there is nothing left to release and its complaint adds nothing.
    try {
      await iterator.return?.();
    } catch {
      // Already failed.
    }
  }
}
