import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { useTestServer } from '../helpers/fixtures.js';
import { accountSite, accountWithToken, api } from '../api/api-helpers.js';

/**
 * Behind a proxy that appends to X-Forwarded-For (HAProxy adds a header line of its own; nginx,
 * Caddy and cloud load balancers append to the one line), the entries the client wrote come
 * first. A client that sends its own X-Forwarded-For must still be counted as the network the
 * proxy saw, whatever it writes and however many lines it sends. Requests go out as raw bytes,
 * so the header lines are exactly these.
 */

const PROXY_SAW = '198.51.100.9';
let spoof = 0;
/** A different made-up client address every time, from another network each. */
const nextSpoof = (): string => `203.0.${++spoof % 250}.7`;

async function raw(
  host: string,
  method: string,
  path: string,
  headerLines: string[],
  body: Buffer = Buffer.alloc(0),
): Promise<{ status: number; text: string }> {
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, 'Connection: close', `Content-Length: ${body.byteLength}`, ...headerLines, '', ''].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
    // No half-close: uWS drops a connection whose client has shut its side.
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  });
}

/** How a proxy in front would pass the client's own X-Forwarded-For on, with its entry added. */
const FORMS: Array<[string, (sent: string) => string[]]> = [
  ['HAProxy: a line of its own after the client’s', (sent) => [`X-Forwarded-For: ${sent}`, `X-Forwarded-For: ${PROXY_SAW}`]],
  ['nginx: appended to the one line', (sent) => [`X-Forwarded-For: ${sent}, ${PROXY_SAW}`]],
  ['appended without a space', (sent) => [`X-Forwarded-For: ${sent},${PROXY_SAW}`]],
  ['several client lines, then the proxy’s', (sent) => [`X-Forwarded-For: ${sent}`, `x-forwarded-for: ${nextSpoof()}`, `X-FORWARDED-FOR: ${PROXY_SAW}`]],
  ['client lines with odd entries', (sent) => [`X-Forwarded-For: unknown, _hidden, ${sent}:80, [2001:db8::${spoof}]:443,,`, `X-Forwarded-For: ${PROXY_SAW}`]],
  ['IPv4-mapped spoof', (sent) => [`X-Forwarded-For: ::ffff:${sent}, ${PROXY_SAW}`]],
  ['Forwarded and X-Real-IP beside it', (sent) => [`Forwarded: for=${sent}`, `X-Real-IP: ${sent}`, `True-Client-IP: ${sent}`, `X-Forwarded-For: ${PROXY_SAW}`]],
];

const server = useTestServer({
  PLINTH_TRUST_PROXY: '1',
  PLINTH_ANON_DEPLOYS_PER_HOUR: '2',
  PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK: '2',
});

describe('a client behind PLINTH_TRUST_PROXY=1 that writes its own X-Forwarded-For', () => {
  const archive = tgzBytes([['index.html', '<h1>hello</h1>']]);
  // Each form is its own real network, so the caps of one row do not spill into the next.
  let realNetwork = 0;

  it.each(FORMS)('is capped as the network the proxy saw for anonymous deploys (%s)', async (_form, lines) => {
    const saw = `198.51.${100 + ++realNetwork}.9`;
    const deploy = () =>
      raw(
        'api.localhost',
        'POST',
        '/v1/deploy',
        lines(nextSpoof()).map((line) => line.replaceAll(PROXY_SAW, saw)),
        archive,
      );
    expect((await deploy()).status).toBe(201);
    expect((await deploy()).status).toBe(201);
    const third = await deploy();
    expect(third.status, third.text.slice(0, 300)).toBe(429);
    expect(third.text).toContain('"code":"limit"');
  });

  it('is capped as the network the proxy saw for site passwords (the site host’s gate)', async () => {
    const owner = await accountWithToken(server.store);
    const site = await accountSite(server.store, owner);
    const set = await api(server, {
      method: 'PUT',
      path: `/v1/sites/${site.name}/access`,
      token: owner.token,
      body: { mode: 'password', password: 'the right one' },
    });
    expect(set.status).toBe(200);
    for (const [form, lines] of FORMS) {
      const saw = `198.51.${100 + ++realNetwork}.9`;
      const guess = (password: string) =>
        raw(`${site.name}.sites.localhost`, 'GET', '/', [
          `Authorization: Basic ${Buffer.from(`x:${password}`).toString('base64')}`,
          ...lines(nextSpoof()).map((line) => line.replaceAll(PROXY_SAW, saw)),
        ]);
      expect((await guess('wrong 1')).status, form).toBe(401);
      expect((await guess('wrong 2')).status, form).toBe(401);
      // Past the cap even the right password is refused: the tries were counted where the proxy said.
      expect((await guess('the right one')).status, form).toBe(429);
    }
  });

  it('still gets its own quota when the proxy saw another network', async () => {
    const deploy = (saw: string) => raw('api.localhost', 'POST', '/v1/deploy', [`X-Forwarded-For: ${PROXY_SAW}`, `X-Forwarded-For: ${saw}`], archive);
    expect((await deploy('192.0.2.10')).status).toBe(201);
    expect((await deploy('192.0.2.11')).status).toBe(201);
    expect((await deploy('192.0.2.12')).status).toBe(429);
    expect((await deploy('2001:db8:7:7::1')).status).toBe(201);
  });
});
