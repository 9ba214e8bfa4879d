import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';

/**
 * With VITEST_FILE_TRAIL naming a file, each test file writes a line when it starts and one when
 * it ends, and one as each of its tests starts, with its worker's pid. A worker that dies mid-file
 * (a native crash takes no JavaScript with it) or hangs (a blocked thread runs no timeout) leaves a
 * start without an end: `.ci/run` prints those files, and the test each was in, when a run fails
 * or outlives its time limit.
 */
const trail = process.env.VITEST_FILE_TRAIL;

if (trail) {
  const note = (what: string, test?: string): void =>
    appendFileSync(trail, `${what} ${process.pid} ${expect.getState().testPath ?? '?'}${test === undefined ? '' : ` ${test}`}\n`);
  beforeAll(() => note('start'));
  beforeEach((context) => note('test', context.task.fullName));
  afterAll(() => note('end'));
}
