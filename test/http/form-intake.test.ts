import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { createBodyMemory } from '../../src/http/body-memory.js';
import { receiveForm, type FormOptions } from '../../src/http/form-intake.js';
import { declaredLength, type BodyLimit } from '../../src/http/intake.js';
import { closeApp, loadNativeUws, type TemplatedApp } from '../../src/http/uws.js';
import { request } from '../helpers/http.js';

/**
 * The app's multipart form reader (busboy behind `receiveForm`), on a bare uWS app over loopback:
 * which fields count as the form's head (those before its first file), where the file goes, and
 * the refusals of a malformed or oversized form. `/head` answers as soon as the head is known;
 * `/file` waits for the whole form.
 */

const B = 'XyZ';
const field = (name: string, value: string): string => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const file = (name: string, filename: string, bytes = ''): string =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/gzip\r\n\r\n${bytes}\r\n`;
const end = `--${B}--\r\n`;

const MAX_FILE_BYTES = 64 * 1024;
const limit: BodyLimit = {
  maxBytes: MAX_FILE_BYTES,
  deadlineMs: 5000,
  lingerIdleMs: 200,
  tooLarge: () => new ServiceError('too_large', 'The file is too large.'),
  tooSlow: () => new ServiceError('bad_request', 'The file is too slow.'),
};

let app: TemplatedApp;
let port: number;
let spoolDir: string;

beforeAll(async () => {
  spoolDir = mkdtempSync(join(tmpdir(), 'plinth-form-'));
  const uws = loadNativeUws({ fallbackRequested: false });
  app = uws.App();
  const memory = createBodyMemory({ budgetBytes: 1024 * 1024, maxBodyBytes: 1024 * 1024 });
  for (const route of ['/head', '/file', '/spooled'] as const) {
    app.post(route, (res, req) => {
      const headers = { 'content-type': req.getHeader('content-type'), 'content-length': req.getHeader('content-length') || undefined };
      const options: FormOptions = {
        limit,
        declaredBytes: declaredLength(headers),
        contentType: headers['content-type'],
        fileField: 'archive',
        spool: { dir: spoolDir, ...(route === '/spooled' ? {} : { memory }) },
      };
      const form = receiveForm(res, options);
      let aborted = false;
      res.onAborted(() => (aborted = true));
      void (async () => {
        let answer: unknown;
        try {
          if (form.refused) throw form.refused;
          if (route === '/head') {
            const head = await form.head;
            answer = { fields: Object.fromEntries(head.fields), fileFollows: head.fileFollows };
          } else {
            const received = await form.done;
            const bytes = received?.data ?? (received?.spoolPath !== undefined ? readFileSync(received.spoolPath) : undefined);
            answer = received && { filename: received.filename, text: bytes!.toString('utf8'), spooled: received.spoolPath !== undefined };
          }
        } catch (err) {
          answer = { error: (err as Error).message };
        }
        const finished = await form.drain();
        form.discard();
        if (!aborted)
          res.cork(() => {
            if (!finished) res.writeHeader('connection', 'close');
            res.end(JSON.stringify(answer ?? null));
          });
      })();
    });
  }
  port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (socket) => (socket ? resolve(uws.us_socket_local_port(socket)) : reject(new Error('no port')))),
  );
});

afterAll(() => {
  closeApp(app);
  rmSync(spoolDir, { recursive: true, force: true });
});

async function post(path: string, body: string, contentType = `multipart/form-data; boundary=${B}`): Promise<any> {
  const res = await request({ port, host: 'localhost', method: 'POST', path, headers: { 'content-type': contentType }, body });
  return JSON.parse(res.text);
}

describe('the head of a form: the fields before its first file', () => {
  it.each([
    ['token, then the archive', field('csrf', 'tok') + file('archive', 's.tgz', 'BYTES') + end, { csrf: 'tok' }, true],
    [
      'token and base revision, then the archive',
      field('csrf', 'tok') + field('base_revision', 'rev_1') + file('archive', 's.tgz') + end,
      { csrf: 'tok', base_revision: 'rev_1' },
      true,
    ],
    ['the archive first: a token after it counts as none', file('archive', 's.tgz', 'BYTES') + field('csrf', 'tok') + end, {}, true],
    ['another file first', file('other', 'x.bin', 'BYTES') + field('csrf', 'tok') + end, {}, true],
    ['an empty archive input is read past', field('csrf', 'tok') + file('archive', '') + end, { csrf: 'tok' }, false],
    ['fields only', field('csrf', 'tok') + end, { csrf: 'tok' }, false],
    ['the first of a repeated field', field('csrf', 'one') + field('csrf', 'two') + file('archive', 's.tgz') + end, { csrf: 'one' }, true],
    // Browsers send none; busboy skips such a part, so a token there counts as none (fails closed).
    ['padding after a delimiter', `--${B} \t\r\nContent-Disposition: form-data; name="csrf"\r\n\r\ntok\r\n` + file('archive', 'a.zip') + end, {}, true],
    ['a value with CRLF inside', field('note', 'a\r\nb') + file('archive', 'a.zip') + end, { note: 'a\r\nb' }, true],
  ])('%s', async (_name, body, fields, fileFollows) => {
    expect(await post('/head', body)).toEqual({ fields, fileFollows });
  });
});

describe('the file of a form', () => {
  it('keeps the archive part, in memory when it fits, else in a spool file', async () => {
    const body = field('csrf', 'tok') + file('other', 'o.bin', 'OTHER') + file('archive', 'site.tgz', 'ARCHIVE\r\n--not-the-boundary') + end;
    expect(await post('/file', body)).toEqual({ filename: 'site.tgz', text: 'ARCHIVE\r\n--not-the-boundary', spooled: false });
    expect(await post('/spooled', body)).toEqual({ filename: 'site.tgz', text: 'ARCHIVE\r\n--not-the-boundary', spooled: true });
  });

  it('has none when the archive input was left empty', async () => {
    expect(await post('/file', field('csrf', 'tok') + file('archive', '') + end)).toBeNull();
  });
});

describe('refusals', () => {
  it.each([
    [
      'a body that ends before its last part',
      '/file',
      field('csrf', 'tok') + `--${B}\r\nContent-Disposition: form-data; name="x"\r\n\r\nhalf`,
      'ended before its last part',
    ],
    ['a field over 4 KB', '/head', field('csrf', 'x'.repeat(5000)) + file('archive', 's.tgz') + end, 'too long'],
    ['two archives', '/file', file('archive', 'a.tgz', 'A') + file('archive', 'b.tgz', 'B') + end, 'one archive at a time'],
    ['an archive over the limit', '/file', file('archive', 'a.tgz', 'x'.repeat(MAX_FILE_BYTES + 1)) + end, 'The file is too large.'],
    ['a form over the limit and its room', '/file', file('archive', 'a.tgz', 'x'.repeat(MAX_FILE_BYTES + 128 * 1024)) + end, 'The file is too large.'],
    ['more than 64 KB before the file', '/head', field('pad', 'x'.repeat(4000)).repeat(20) + file('archive', 's.tgz') + end, 'too much before its file'],
    ['too many parts', '/file', field('f', 'v').repeat(70) + end, 'too many parts'],
  ])('%s', async (_name, path, body, message) => {
    expect((await post(path, body)).error).toContain(message);
  });

  it('refuses a multipart type without a boundary', async () => {
    expect((await post('/file', field('csrf', 'tok') + end, 'multipart/form-data')).error).toContain('not valid multipart');
  });
});
