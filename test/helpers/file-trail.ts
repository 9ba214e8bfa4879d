import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * With VITEST_FILE_TRAIL naming a file, each test file writes a line when it starts and one when
 * it ends, with its worker's pid. A worker that dies mid-file (a native crash takes no JavaScript
 * with it) leaves a start without an end: `.ci/run` prints those files when `npm test` fails.
 */
const trail = process.env.VITEST_FILE_TRAIL;

if (trail) {
  const note = (what: string): void => appendFileSync(trail, `${what} ${process.pid} ${expect.getState().testPath ?? '?'}\n`);
  beforeAll(() => note('start'));
  afterAll(() => note('end'));
}
