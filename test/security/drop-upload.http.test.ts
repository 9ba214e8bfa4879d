import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { AppClient } from '../app/http-client.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * The drop page (the app's publish form) takes up to 90 MB. A refusal that needs nothing of the
 * archive (a missing or wrong form token, an anonymous cap) must come before the archive is read,
 * as the API's deploy refuses before reading: the fields of a plain form come before its file, so
 * they are checked on the body's first bytes. Requests go out as raw bytes on a socket, so the
 * test sees when the answer comes and how much of the body the server had taken by then.
 */

const MB = 1024 * 1024;
const BODY_BYTES = 90 * MB;
const BOUNDARY = '----plinthdropattack';

const field = (name: string, value: string): string => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const fileStart = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="archive"; filename="site.tgz"\r\nContent-Type: application/gzip\r\n\r\n`;

interface Sent {
  status: number;
  text: string;
  /** Body bytes handed to the socket when the first byte of the answer came (or it closed). */
  bodyBytesWhenAnswered: number;
}

/**
 * POSTs `start`, then (with `keepSending`) filler up to BODY_BYTES as fast as the server takes it,
 * stopping when the answer comes; without it, sends nothing more and waits up to `waitMs`.
 */
function post(path: string, headers: Record<string, string>, start: Buffer, options: { keepSending: boolean; waitMs?: number }): Promise<Sent> {
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: ${new URL(server.appUrl).host}`,
    `Content-Length: ${BODY_BYTES}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let handed = start.byteLength;
    let answeredAt: number | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, bodyBytesWhenAnswered: answeredAt ?? handed - socket.writableLength });
    };
    const timer = setTimeout(finish, options.waitMs ?? 20_000);
    socket.on('data', (chunk) => {
      answeredAt ??= handed - socket.writableLength;
      chunks.push(chunk);
      // The answer is whole once its body (Content-Length) is in.
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? NaN);
      if (end !== -1 && Buffer.byteLength(text.slice(end + 4), 'latin1') >= length) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), start]));
    if (!options.keepSending) return;
    const filler = Buffer.alloc(MB, 0x61);
    const pump = (): void => {
      while (!done && answeredAt === undefined && handed < BODY_BYTES) {
        const piece = filler.subarray(0, Math.min(MB, BODY_BYTES - handed));
        handed += piece.byteLength;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
    };
    pump();
  });
}

async function browser(): Promise<{ client: AppClient; cookie: string; csrf: string }> {
  const client = new AppClient(server);
  const csrf = await client.formToken('/publish');
  return { client, csrf, cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
}

const formHeaders = (cookie: string): Record<string, string> => ({
  cookie,
  origin: server.appUrl,
  'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
});

const server = useAppServer({ PLINTH_ANON_DEPLOYS_PER_HOUR: '1', PLINTH_ANON_SITES_PER_HOUR: '0' });

describe('the drop page refuses before it reads the archive', () => {
  const forms: Array<[string, (csrf: string) => string]> = [
    ['no form token', () => ''],
    ['a wrong form token', () => field('csrf', 'forged-token')],
    ['an empty form token', () => field('csrf', '')],
    ['the token of another browser', () => field('csrf', 'x'.repeat(43))],
    ['the right token after the file', () => ''],
  ];

  it.each(forms)('a form with %s is answered 403 while the client still holds most of the body', async (name, fields) => {
    const { cookie, csrf } = await browser();
    const after = name === 'the right token after the file' ? Buffer.from(`\r\n${field('csrf', csrf)}`) : Buffer.alloc(0);
    const start = Buffer.concat([Buffer.from(fields(csrf) + fileStart), Buffer.alloc(MB, 0x62), after]);
    const answer = await post('/publish', formHeaders(cookie), start, { keepSending: false, waitMs: 10_000 });
    expect(answer.status, 'no answer while the body was incomplete').toBe(403);
    expect(answer.text).toContain('This form has expired');
  });

  it.each(forms.slice(0, 2))('a form with %s that keeps sending is answered after far less than its 90 MB', async (_name, fields) => {
    const { cookie, csrf } = await browser();
    const answer = await post('/publish', formHeaders(cookie), Buffer.from(fields(csrf) + fileStart), { keepSending: true });
    expect(answer.status).toBe(403);
    console.info(`${_name}: ${(answer.bodyBytesWhenAnswered / MB).toFixed(1)} MB sent before the answer`);
    // The server reads on a little (at most 16 MB, as for the API's refusals) before it closes.
    expect(answer.bodyBytesWhenAnswered, `${(answer.bodyBytesWhenAnswered / MB).toFixed(1)} MB sent before the answer`).toBeLessThan(40 * MB);
  });

  it('the script’s upload with a wrong header token is answered 403 before its body', async () => {
    const { cookie } = await browser();
    const answer = await post(
      '/publish',
      { cookie, origin: server.appUrl, accept: 'application/json', 'x-csrf-token': 'forged-token', 'content-type': 'application/gzip' },
      Buffer.alloc(MB, 0x63),
      { keepSending: false, waitMs: 10_000 },
    );
    expect(answer.status).toBe(403);
  });

  it('an anonymous drop past the per-network cap is answered 429 before its archive is read', async () => {
    const first = await browser();
    const published = await first.client.postMultipart(
      '/publish',
      { csrf: first.csrf },
      { field: 'archive', filename: 'site.tgz', content: tgzBytes([['index.html', '<h1>first</h1>']]) },
    );
    expect(published.status).toBe(303);
    const { cookie, csrf } = await browser();
    const start = Buffer.concat([Buffer.from(field('csrf', csrf) + fileStart), Buffer.alloc(MB, 0x64)]);
    const answer = await post('/publish', formHeaders(cookie), start, { keepSending: false, waitMs: 10_000 });
    expect(answer.status, 'no answer while the body was incomplete').toBe(429);
  });
});
