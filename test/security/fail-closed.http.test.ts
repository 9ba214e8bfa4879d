import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { tempDir } from '../helpers/sites.js';

/**
 * The process as an operator starts it (`node dist/main.js`), given what operators get wrong:
 * it refuses to start on a setting it does not know, and a local install cannot be reached from
 * the network.
 */

const started: MainProcess[] = [];
afterAll(async () => {
  for (const main of started) await killMain(main);
});

async function start(env: Record<string, string>): Promise<MainProcess> {
  const main = await startMain(env);
  started.push(main);
  return main;
}

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('settings that fail closed', () => {
  it('refuses to start on a mistyped PLINTH_* variable, naming it and the setting it resembles', async () => {
    // The typo of the incident: ignored, the node ran alone on the cluster's bucket.
    const refused = startMain(mainEnv(tempDir(), { PLINTH_DATABSE_URL: 'postgres://plinth@127.0.0.1:9/plinth' }));
    await expect(refused).rejects.toThrow(/exited with 1 before listening/);
    await expect(refused).rejects.toThrow('PLINTH_DATABSE_URL is not a setting of Plinth (the closest one is PLINTH_DATABASE_URL)');
  });

  it("starts beside the plinth command's own variables", async () => {
    const main = await start(mainEnv(tempDir(), { PLINTH_API_URL: 'https://api.example.com', PLINTH_TOKEN: 'pl_example' }));
    expect((await request({ port: main.port, host: 'localhost' })).status).toBe(200);
  });
});

describe('where a local install listens', () => {
  it('listens on loopback only unless PLINTH_LISTEN_HOST says otherwise', async () => {
    const { PLINTH_LISTEN_HOST: _unset, ...defaults } = mainEnv(tempDir());
    const local = await start(defaults);
    expect(await accepts('127.0.0.1', local.port)).toBe(true);
    // Another address of this machine (127.0.0.2 stands for the network card: same machine, not the bound address).
    expect(await accepts('127.0.0.2', local.port)).toBe(false);

    const everywhere = await start(mainEnv(tempDir(), { PLINTH_LISTEN_HOST: '0.0.0.0' }));
    expect(await accepts('127.0.0.2', everywhere.port)).toBe(true);
  });
});
