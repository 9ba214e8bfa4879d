import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/runtime/server.js';
import { hashToken } from '../../src/store/index.js';
import { request } from '../helpers/http.js';
import { INGEST_WORKER } from '../helpers/server.js';
import { publishSite, serverDataDir } from '../helpers/sites.js';

/**
 * Secrets that travel in a path (claim links, deletion approvals, invitations) never reach the
 * service's log whole, whichever line logs the path: the access log cuts them to their prefix, and
 * so do the lines of a failed request (`app.failed`, `request.failed`) and of a refused
 * cross-site form (`app.cross_site_refused`). Logs are read by more people than the links' holders,
 * and kept longer than the links live.
 *
 * The server's clock fails while `failing` is set: every request then ends in an internal error,
 * the kind a store that stopped answering causes, which is logged with its path.
 */

const CLAIM = `ct_${'c'.repeat(32)}`;
const APPROVAL = `ap_${'a'.repeat(32)}`;
const INVITE = `inv_${'i'.repeat(32)}`;
const SECRETS = ['c'.repeat(32), 'a'.repeat(32), 'i'.repeat(32)];

let server: RunningServer;
let failing = false;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const config = loadConfig({
    PLINTH_PORT: '0',
    PLINTH_THREADS: '1',
    PLINTH_DATA_DIR: serverDataDir(),
    PLINTH_LISTEN_HOST: '127.0.0.1',
    PLINTH_INGEST_THREADS: '1',
    PLINTH_INGEST_IDLE_THREADS: '0',
  });
  const log = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const now = (): number => {
    if (failing) throw new Error('the clock stopped');
    return Date.now();
  };
  server = await startServer({ config, log, now, ingestWorkerFile: INGEST_WORKER });
  // An unclaimed site with its claim link: its page finds it before it reads the clock.
  const expiresAt = Date.now() + 3_600_000;
  await publishSite(
    server.store,
    'kept-secret',
    { 'index.html': '<h1>hi</h1>' },
    { plan: 'anonymous', claimed: false, expiresAt, claimTokenHash: hashToken(CLAIM) },
  );
});

afterAll(async () => {
  failing = false;
  await server.close();
});

function logged(event: string): Array<Record<string, unknown>> {
  return lines.filter((line) => line.event === event);
}

function expectNoSecretLogged(): void {
  const text = lines.map((line) => JSON.stringify(line)).join('\n');
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe('a path that carries a secret, in the log', () => {
  it('is cut to its prefix in the line of a failed app page or API call', async () => {
    failing = true;
    try {
      const claim = await request({ port: server.port, host: 'app.localhost', path: `/claim/${CLAIM}` });
      const approval = await request({ port: server.port, host: 'api.localhost', path: `/v1/approvals/${APPROVAL}` });
      expect([claim.status, approval.status]).toEqual([500, 500]);
    } finally {
      failing = false;
    }
    expect(logged('app.failed').map((line) => line.path)).toEqual(['/claim/ct_…']);
    expect(logged('request.failed').map((line) => line.path)).toEqual(['/v1/approvals/ap_…']);
    expectNoSecretLogged();
  });

  it('is cut to its prefix in the line of a refused cross-site form', async () => {
    const before = logged('app.cross_site_refused').length;
    for (const path of [`/approve/${APPROVAL}`, `/invites/${INVITE}/accept`]) {
      const res = await request({
        port: server.port,
        host: 'app.localhost',
        method: 'POST',
        path,
        headers: { origin: 'https://elsewhere.example', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'address=x',
      });
      expect(res.status).toBe(403);
    }
    expect(
      logged('app.cross_site_refused')
        .slice(before)
        .map((line) => line.path),
    ).toEqual(['/approve/ap_…', '/invites/inv_…/accept']);
    expectNoSecretLogged();
  });
});
