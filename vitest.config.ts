import { defineConfig } from 'vitest/config';

/**
 * Four projects (CONVENTIONS "Testing"): `unit` for pure rules, the store and the ingest pool;
 * `http` for the real server over loopback (`*.http.test.ts`); `browser` for Chromium
 * (`*.browser.test.ts`); `reliability` for kills, full disks, fuzzing, soaks and hostile clients.
 * `npm test` runs the first three, `npm run test:reliability` the last; `.ci/run` runs both.
 * test/suite.test.ts checks that every file sits in the project its contents need.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/**/*.http.test.ts', 'test/**/*.browser.test.ts', 'test/reliability/**'] },
      },
      { extends: true, test: { name: 'http', include: ['test/**/*.http.test.ts'], exclude: ['test/reliability/**'] } },
      { extends: true, test: { name: 'browser', include: ['test/**/*.browser.test.ts'], exclude: ['test/reliability/**'] } },
      { extends: true, test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'] } },
    ],
  },
});
