import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Six projects (CONVENTIONS "Testing"): `unit` for pure rules, the store and the ingest pool;
 * `http` for the real server over loopback (`*.http.test.ts`); `browser` for Chromium
 * (`*.browser.test.ts`); `reliability` for kills, full disks, fuzzing, soaks and hostile clients;
 * `cluster` for several nodes on a private PostgreSQL and bucket; `edge` for custom domains behind Caddy
 * with certificates from Pebble. `npm test` runs the first three, `npm run test:reliability`,
 * `npm run test:cluster` and `npm run test:edge` the others; `.ci/run` runs all of them.
 * test/suite.test.ts checks that every file sits in the project its contents need.
 */

/**
 * Slow checks that are not first-line ones: they run with the reliability project (one file at a
 * time, after the first-line projects in .ci/run), not with `npm test`. Walkthroughs (every guide's
 * examples in a shell; an agent that reads only llms.txt), pixel and layout comparisons of whole
 * pages at two widths, packing and installing the CLI, and the load generator's statistics over
 * long runs. Each area keeps its first-line checks in `npm test`: the guides' facts, links and
 * examples' shapes, the badge's injection, the app's pages and flows, the CLI's commands, the load
 * suite's traffic shape. test/suite.test.ts checks that each exists.
 */
export const SECOND_LINE = [
  'test/docs/examples.http.test.ts',
  'test/docs/llms-agent.http.test.ts',
  'test/badge/page-unchanged.browser.test.ts',
  'test/app/tables.browser.test.ts',
  'test/app/issue33-pages.browser.test.ts',
  'test/cli/install.http.test.ts',
  'test/load/generator.test.ts',
];

const ELSEWHERE = ['test/reliability/**', 'test/cluster/**', 'test/edge/**', ...SECOND_LINE];

/**
 * The first-line projects run two files at a time: most of a file's time is spent waiting on a
 * server, a spawned CLI or Chromium, so a second file fills the other core (ports are ephemeral
 * and every server has its own temporary data directory, so files never meet). A worker also
 * runs file after file without restarting (`isolate: false`): starting a fork and importing
 * src/ through vite again for each of some 180 files cost more than two minutes of CPU. A file
 * closes what it starts (test/helpers/fixtures.ts), and no test replaces a module of ours.
 */
const FIRST_LINE = { maxWorkers: 2, isolate: false, setupFiles: ['test/helpers/file-trail.ts'] };

/**
 * Browser files whose cases are independent may run them side by side (`describe.concurrent`,
 * the device and login files): a case mostly waits on Chromium and the server. Three at a time at
 * most, beside the other files of the worker pool on two cores; a step that waits for a page's
 * state (`expect.poll`) then allows it five seconds rather than vitest's one, since pages load
 * behind those of the other cases.
 */
const IN_FILE = { maxConcurrency: 3, expect: { poll: { timeout: 5_000 } } };

/**
 * The other projects run one file at a time in a fresh process, after the first-line ones when
 * all are run together: they time the wall clock, kill processes and fill disks. Their servers keep
 * their data on the disk, not on the run's tmpfs folder (test/global-setup.ts), so their timings
 * and sizes are those of a real install.
 */
const ONE_AT_A_TIME = { maxWorkers: 1, sequence: { groupOrder: 1 }, env: { TEST_DATA_ROOT: '' }, setupFiles: ['test/helpers/file-trail.ts'] };

/**
 * The first-line files that take longest (a minute or more of a worker in CI), slowest first.
 * They start before the other files of their project, so that neither worker is left running one
 * of them alone at the end. vitest orders a project's files by their last durations when it has
 * its cache (node_modules/.vite), and by size in a fresh clone, where a short file that runs long
 * (one that walks many pages) would start among the last. test/suite.test.ts checks that each exists.
 */
export const SLOW_FIRST = [
  'test/app/flows.browser.test.ts',
  'test/security/serving.browser.test.ts',
  'test/security/authorization.http.test.ts',
  'test/app/drop.browser.test.ts',
  'test/cli/login.browser.test.ts',
  'test/security/webhooks.http.test.ts',
  'test/cli/admin.http.test.ts',
  'test/api/deploy.http.test.ts',
];

const ROOT = fileURLToPath(new URL('.', import.meta.url));

/**
 * vitest's order with the SLOW_FIRST files moved to the front of their project's run. The projects
 * stay one block each: a worker goes on to the next file without restarting (`isolate: false`)
 * only when that file is of the same project.
 */
class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = SLOW_FIRST.indexOf(relative(ROOT, file.moduleId));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    const blocks: TestSpecification[][] = [];
    for (const file of sorted) {
      const block = blocks.at(-1);
      if (block && block[0]!.project === file.project) block.push(file);
      else blocks.push([file]);
    }
    // Array.prototype.sort is stable: the other files keep vitest's order.
    return blocks.flatMap((block) => block.sort((a, b) => rank(a) - rank(b)));
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    sequence: { sequencer: SlowFilesFirst },
    // Builds dist/ when it is missing or older than src/ (tests run the built server and workers),
    // and gives the run a folder on tmpfs for its servers' data.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.http.test.ts', 'test/**/*.browser.test.ts', ...ELSEWHERE],
          ...FIRST_LINE,
        },
      },
      { extends: true, test: { name: 'http', include: ['test/**/*.http.test.ts'], exclude: ELSEWHERE, ...FIRST_LINE } },
      { extends: true, test: { name: 'browser', include: ['test/**/*.browser.test.ts'], exclude: ELSEWHERE, ...FIRST_LINE, ...IN_FILE } },
      {
        extends: true,
        test: { name: 'reliability', include: ['test/reliability/**/*.test.ts', ...SECOND_LINE], ...ONE_AT_A_TIME, expect: IN_FILE.expect },
      },
      // Needs PostgreSQL's server binaries (Debian's postgresql package) and starts s3rver.
      { extends: true, test: { name: 'cluster', include: ['test/cluster/**/*.test.ts'], ...ONE_AT_A_TIME } },
      // Custom domains end to end: needs Debian's caddy and pebble; everything on loopback.
      { extends: true, test: { name: 'edge', include: ['test/edge/**/*.test.ts'], ...ONE_AT_A_TIME } },
    ],
  },
});
