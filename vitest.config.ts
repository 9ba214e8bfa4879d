import { defineConfig } from 'vitest/config';

/**
 * Six projects (CONVENTIONS "Testing"): `unit` for pure rules, the store and the ingest pool;
 * `http` for the real server over loopback (`*.http.test.ts`); `browser` for Chromium
 * (`*.browser.test.ts`); `reliability` for kills, full disks, fuzzing, soaks and hostile clients;
 * `cluster` for several nodes on a private PostgreSQL and bucket; `edge` for custom domains behind Caddy
 * with certificates from Pebble. `npm test` runs the first three, `npm run test:reliability`,
 * `npm run test:cluster` and `npm run test:edge` the others; `.ci/run` runs all of them.
 * test/suite.test.ts checks that every file sits in the project its contents need.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Builds dist/ when it is missing or older than src/ (tests run the built server and workers).
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.http.test.ts', 'test/**/*.browser.test.ts', 'test/reliability/**', 'test/cluster/**', 'test/edge/**'],
        },
      },
      { extends: true, test: { name: 'http', include: ['test/**/*.http.test.ts'], exclude: ['test/reliability/**', 'test/cluster/**', 'test/edge/**'] } },
      { extends: true, test: { name: 'browser', include: ['test/**/*.browser.test.ts'], exclude: ['test/reliability/**', 'test/cluster/**', 'test/edge/**'] } },
      { extends: true, test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'] } },
      // Needs PostgreSQL's server binaries (Debian's postgresql package) and starts s3rver.
      { extends: true, test: { name: 'cluster', include: ['test/cluster/**/*.test.ts'] } },
      // Custom domains end to end: needs Debian's caddy and pebble; everything on loopback.
      { extends: true, test: { name: 'edge', include: ['test/edge/**/*.test.ts'] } },
    ],
  },
});
