import { posix } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkArchivePath, MAX_PATH_BYTES } from '../../src/ingest/archive-path.js';
import { createLeakGuard } from '../../src/ingest/leak-guard.js';
import { isPlaceholder, scanForSecrets } from '../../src/ingest/secrets.js';
import { normalizeRequestPath } from '../../src/serve/request-path.js';
import { resolveSitePath } from '../../src/serve/resolve.js';
import { isSkippedPath } from '../../src/rules/index.js';

// Property tests for the pure rules every request and every archive entry passes through. Seeded
// (FC_SEED replays a failure; fast-check prints the seed and the shrunk counterexample).
const seed = Number(process.env.FC_SEED ?? 20261123);
const runs = Number(process.env.FC_RUNS ?? 2000);
const check = <T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => boolean | void): void =>
  fc.assert(fc.property(arbitrary, predicate), { seed, numRuns: runs });

/** Pieces hostile paths are made of: separators, dots, escapes of them, controls, unicode. */
const hostilePiece = fc.oneof(
  fc.constantFrom(
    '/',
    '\\',
    '.',
    '..',
    '%2e',
    '%2E',
    '%2f',
    '%2F',
    '%5c',
    '%00',
    '%0a',
    '%',
    '%zz',
    '%c0%ae',
    '?',
    '#',
    '//',
    'C:',
    '~',
    ' ',
    '.well-known',
    'node_modules',
    '.git',
    '.env',
    'index.html',
    'a.map',
    'K.PEM',
  ),
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.stringMatching(/^[a-z0-9_-]{1,8}$/),
);
const hostilePath = fc.array(hostilePiece, { maxLength: 12 }).map((pieces) => pieces.join(''));
const plainSegment = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,15}$/);
const plainPath = fc.array(plainSegment, { minLength: 1, maxLength: 6 }).map((segments) => segments.join('/'));
const CONTROL = /[\u0000-\u001f\u007f]/;

describe('request path resolution', () => {
  it('never throws, and never yields a path that climbs, hides a separator or a control byte', () => {
    check(hostilePath, (raw) => {
      for (const url of [raw, `/${raw}`]) {
        const result = normalizeRequestPath(url, 4096);
        if (!result.ok) continue;
        const segments = result.path === '' ? [] : result.path.split('/');
        expect(segments.every((s) => s !== '' && s !== '.' && s !== '..')).toBe(true);
        expect(result.path).not.toMatch(CONTROL);
        expect(result.path).not.toContain('\\');
        expect(posix.join('/site', result.path).startsWith('/site')).toBe(true);
      }
    });
  });

  it('normalises a normal path to itself, also when percent-encoded', () => {
    check(plainPath, (path) => {
      expect(normalizeRequestPath(`/${path}`, 4096)).toEqual({ ok: true, path, trailingSlash: false });
      const encoded = `/${path
        .split('/')
        .map((s) => [...s].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''))
        .join('/')}`;
      expect(normalizeRequestPath(encoded, 4096)).toEqual({ ok: true, path, trailingSlash: false });
    });
  });

  it('refuses to climb above the root however the dots are written', () => {
    const up = fc.constantFrom('..', '%2e%2e', '.%2E', '%2E.');
    const sep = fc.constantFrom('/', '%2f', '%2F');
    check(fc.tuple(fc.array(plainSegment, { maxLength: 3 }), fc.array(fc.tuple(up, sep), { minLength: 1, maxLength: 5 }), plainPath), ([down, ups, rest]) => {
      if (ups.length <= down.length) return;
      const url = `/${down.map((s) => `${s}/`).join('')}${ups.map(([u, s]) => u + s).join('')}${rest}`;
      expect(normalizeRequestPath(url, 4096)).toEqual({ ok: false, status: 400 });
    });
  });

  it('only ever answers with a stored path, and never with a skipped one', () => {
    const stored = fc.uniqueArray(
      fc.oneof(
        plainPath,
        plainPath.map((p) => `${p}.html`),
        plainPath.map((p) => `${p}/index.html`),
        fc.constantFrom('index.html', '404.html', '.env', '.git/config', 'node_modules/index.html', 'a.map'),
      ),
      { maxLength: 12 },
    );
    check(fc.tuple(hostilePath, stored), ([raw, paths]) => {
      const set = new Set(paths);
      const request = normalizeRequestPath(`/${raw}`, 4096);
      if (!request.ok) return;
      const resolution = resolveSitePath(request.path, request.trailingSlash, (p) => set.has(p));
      if (!('path' in resolution)) return;
      expect(set.has(resolution.path)).toBe(true);
      expect(isSkippedPath(resolution.path)).toBe(false);
      if (isSkippedPath(request.path)) expect(resolution.kind).not.toBe('file');
    });
  });
});

describe('archive path validation', () => {
  it('never throws, and what it accepts is relative, clean, bounded and stable', () => {
    check(hostilePath, (raw) => {
      const result = checkArchivePath(raw);
      if (!result.ok) {
        expect(result.reason.length).toBeGreaterThan(0);
        return;
      }
      const segments = result.path.split('/');
      expect(segments.every((s) => s !== '' && s !== '.' && s !== '..')).toBe(true);
      expect(result.path).not.toMatch(CONTROL);
      expect(result.path).not.toMatch(/\\|^[A-Za-z]:/);
      expect(Buffer.byteLength(result.path)).toBeLessThanOrEqual(MAX_PATH_BYTES);
      expect(posix.join('/site', result.path).startsWith('/site/')).toBe(true);
      // Accepting the normalised form again changes nothing.
      expect(checkArchivePath(result.path)).toEqual(result);
    });
  });

  it('refuses every path with a ".." segment, whichever separator is used', () => {
    check(fc.tuple(fc.array(plainSegment, { maxLength: 3 }), fc.constantFrom('/', '\\'), fc.array(plainSegment, { maxLength: 3 })), ([before, sep, after]) => {
      expect(checkArchivePath([...before, '..', ...after].join(sep)).ok).toBe(false);
    });
  });

  it('refuses absolute, drive and network paths', () => {
    check(fc.tuple(fc.constantFrom('/', '\\', 'C:\\', 'c:', 'D:/', '//server/', '\\\\server\\'), plainPath), ([prefix, path]) => {
      expect(checkArchivePath(prefix + path).ok).toBe(false);
    });
  });

  it('accepts every ordinary relative path unchanged', () => {
    check(plainPath, (path) => {
      expect(checkArchivePath(path)).toEqual({ ok: true, path });
    });
  });
});

describe('skip rules', () => {
  const caseOf = (text: string, flips: boolean[]): string => [...text].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join('');

  it('skip every dotfile and dot-folder but .well-known/, in any letter case', () => {
    check(
      fc.tuple(
        fc.array(plainSegment, { maxLength: 3 }),
        fc.stringMatching(/^\.[a-z0-9._-]{0,10}$/),
        fc.array(plainSegment, { maxLength: 2 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
      ),
      ([before, dotted, after, flips]) => {
        const path = [...before, dotted, ...after].join('/');
        if (dotted === '.well-known' && after.length > 0) return;
        expect(isSkippedPath(caseOf(path, flips))).toBe(true);
      },
    );
  });

  it('skip whatever sits in .git/, node_modules/ or __MACOSX/, and .map, .pem, .key files, in any letter case', () => {
    const folder = fc.constantFrom('.git', 'node_modules', '__MACOSX');
    const suffix = fc.constantFrom('.map', '.pem', '.key');
    check(fc.tuple(plainPath, folder, plainPath, suffix, fc.array(fc.boolean(), { minLength: 1, maxLength: 8 })), ([before, skipped, after, ending, flips]) => {
      expect(isSkippedPath(caseOf(`${before}/${skipped}/${after}`, flips))).toBe(true);
      expect(isSkippedPath(caseOf(`${before}/${after}${ending}`, flips))).toBe(true);
    });
  });

  it('keep ordinary paths and .well-known/ files', () => {
    check(plainPath, (path) => {
      const special = /(^|\/)(node_modules|thumbs\.db)(\/|$)|\.(map|pem|key)$/i;
      if (special.test(path)) return;
      expect(isSkippedPath(path)).toBe(false);
      expect(isSkippedPath(`.well-known/${path}`)).toBe(false);
    });
  });

  it('never throw, and judge the same whatever the letter case (ASCII)', () => {
    check(hostilePath, (path) => {
      if (!/^[\x00-\x7f]*$/.test(path)) return void isSkippedPath(path);
      expect(isSkippedPath(path.toUpperCase())).toBe(isSkippedPath(path.toLowerCase()));
    });
  });
});

describe('the secret scanner', () => {
  const KEY_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const keyFrom = (alphabet: string, length: number) =>
    fc.array(fc.integer({ min: 0, max: alphabet.length - 1 }), { minLength: length, maxLength: length }).map((ix) => ix.map((i) => alphabet[i]).join(''));
  const proseLine = fc.array(fc.stringMatching(/^[a-z]{1,10}$/), { maxLength: 12 }).map((words) => words.join(' '));
  const prose = fc.array(proseLine, { minLength: 1, maxLength: 20 });

  it('never throws on arbitrary text and finds nothing in ordinary prose', () => {
    check(fc.string({ unit: 'binary', maxLength: 300 }), (text) => void scanForSecrets(text));
    check(prose, (lines) => {
      expect(scanForSecrets(lines.join('\n'))).toBeUndefined();
    });
  });

  it('finds a planted AWS key id or GitHub token on the line it was planted', () => {
    const planted = fc.oneof(
      keyFrom(KEY_CHARS, 16).map((body) => ({ key: `AKIA${body}`, body, kind: 'aws-access-key-id' })),
      keyFrom(ALNUM, 36).map((body) => ({ key: `ghp_${body}`, body, kind: 'github-token' })),
    );
    check(fc.tuple(prose, planted, fc.nat(), fc.constantFrom('\n', '\r\n')), ([lines, secret, at, eol]) => {
      if (isPlaceholder(secret.body)) return;
      const line = at % (lines.length + 1);
      const text = [...lines.slice(0, line), `token = "${secret.key}"`, ...lines.slice(line)].join(eol);
      expect(scanForSecrets(text)).toEqual({ line: line + 1, kind: secret.kind });
    });
  });

  it('finds a planted key on its line whatever the file is encoded or compressed in', () => {
    const spell = (text: string, spelling: string): Buffer => {
      const wide = (mark: boolean, order: 'le' | 'be'): Buffer => {
        const bytes = Buffer.from(`${mark ? '\ufeff' : ''}${text}`, 'utf16le');
        return order === 'le' ? bytes : bytes.swap16();
      };
      const utf32 = (order: 'le' | 'be'): Buffer => {
        const points = [0xfeff, ...[...text].map((char) => char.codePointAt(0)!)];
        const out = Buffer.alloc(points.length * 4);
        points.forEach((point, i) => (order === 'le' ? out.writeUInt32LE(point, 4 * i) : out.writeUInt32BE(point, 4 * i)));
        return out;
      };
      const [encoding, compression] = spelling.split('+');
      const bytes =
        encoding === 'utf-8'
          ? Buffer.from(text)
          : encoding === 'utf-8-bom'
            ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])
            : encoding === 'utf-32le'
              ? utf32('le')
              : encoding === 'utf-32be'
                ? utf32('be')
                : wide(encoding!.endsWith('-bom'), encoding!.startsWith('utf-16le') ? 'le' : 'be');
      return compression === 'gzip' ? gzipSync(bytes) : compression === 'br' ? brotliCompressSync(bytes) : bytes;
    };
    const spellings = ['utf-8', 'utf-8-bom', 'utf-16le', 'utf-16le-bom', 'utf-16be', 'utf-16be-bom', 'utf-32le', 'utf-32be'].flatMap((encoding) => [
      encoding,
      `${encoding}+gzip`,
      `${encoding}+br`,
    ]);
    const planted = keyFrom(KEY_CHARS, 16).map((body) => ({ key: `AKIA${body}`, body }));
    check(fc.tuple(prose, planted, fc.nat(), fc.constantFrom('\n', '\r\n'), fc.constantFrom(...spellings)), ([lines, secret, at, eol, spelling]) => {
      if (isPlaceholder(secret.body)) return;
      const line = at % (lines.length + 1);
      const text = [...lines.slice(0, line), `key = "${secret.key}"`, ...lines.slice(line)].join(eol);
      const path = spelling.endsWith('+br') ? 'config.txt.br' : 'config.txt';
      const hits = createLeakGuard({ maxFileBytes: 1 << 20, maxExpandedBytes: 1 << 30 }).check(path, spell(text, spelling));
      expect(
        hits.map((hit) => ({ file: path, line: hit.line, kind: hit.kind })),
        spelling,
      ).toEqual([{ file: path, line: line + 1, kind: 'aws-access-key-id' }]);
    });
  });

  it('stays linear on hostile runs of key prefixes (no catastrophic backtracking)', () => {
    const prefix = fc.constantFrom(
      'AKIA',
      'ghp_',
      'sk-ant-api03-',
      'xoxb-1-',
      '-----BEGIN PRIVATE KEY-----',
      'hooks.slack.com/services/T',
      'SG.',
      'aws_secret_access_key=',
      'eyJ',
      'mailgun ',
    );
    const filler = fc.constantFrom('A', 'a', '0', '_', '-', '.', '/', '+', '=', ' ');
    check(fc.tuple(fc.array(prefix, { minLength: 1, maxLength: 50 }), filler, fc.integer({ min: 1000, max: 50_000 })), ([prefixes, fill, repeat]) => {
      const text = prefixes.join(fill.repeat(Math.floor(repeat / prefixes.length)));
      const started = performance.now();
      scanForSecrets(text);
      // A hang, not a speed target: a linear scan of 50 KB takes milliseconds; a backtracking one would take minutes.
      expect(performance.now() - started).toBeLessThan(5000);
    });
  });
});
