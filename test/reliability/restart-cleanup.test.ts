import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { tempDir } from '../helpers/sites.js';
import { slowUpload } from '../helpers/slow-client.js';

let main: MainProcess | undefined;
afterEach(() => killMain(main));

it('removes the upload spool and blob temp files of a killed deploy at the next start', async () => {
  const dataDir = tempDir('plinth-restart-');
  // Bodies are spooled, not received into memory, so that the killed upload leaves a spool file.
  main = await startMain(mainEnv(dataDir, { PLINTH_MEMORY_BODY_MB: '0' }));
  const killedPid = main.child.pid!;
  const upload = slowUpload({
    port: main.port,
    host: 'api.localhost',
    path: '/v1/deploy',
    headers: { 'content-type': 'application/gzip' },
    contentLength: 5_000_000,
  });
  upload.write(Buffer.alloc(200_000, 1));
  const uploads = join(dataDir, 'tmp', 'uploads');
  for (let i = 0; i < 100 && readdirSync(uploads).length === 0; i++) await sleep(20);
  expect(readdirSync(uploads)).toHaveLength(1);

  main.child.kill('SIGKILL');
  await main.exited;
  upload.req.destroy();
  // What an ingest thread of the killed process leaves when it dies between writing a blob's
  // temp file and renaming it into place (names carry the writer's pid), a minute old at most.
  const blobTmp = join(dataDir, 'blobs', 'tmp');
  writeFileSync(join(blobTmp, `${killedPid}-3-a1b2c3d4-17.tmp`), 'half a blob');
  writeFileSync(join(blobTmp, `${killedPid}-9f8e7d6c5b4a39281706f5e4.tmp`), 'half a blob');

  main = await startMain(mainEnv(dataDir));
  expect(readdirSync(uploads)).toEqual([]);
  expect(readdirSync(blobTmp)).toEqual([]);
});
