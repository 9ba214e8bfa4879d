import { describe, expect, it } from 'vitest';
import { checkArchivePath, findCaseDuplicate, stripCommonTopFolder } from '../../src/ingest/archive-path.js';

describe('checkArchivePath', () => {
  it.each([
    ['index.html', 'index.html'],
    ['./index.html', 'index.html'],
    ['././index.html', 'index.html'],
    ['css//site.css', 'css/site.css'],
    ['a/./b/./c.txt', 'a/b/c.txt'],
    ['assets/', 'assets'],
    ['./assets/img/', 'assets/img'],
    ['a...b', 'a...b'],
    ['...', '...'],
    ['..hidden', '..hidden'],
    ['a/..b/c', 'a/..b/c'],
    ['%2e%2e/x', '%2e%2e/x'],
    ['a%2f..%2fb', 'a%2f..%2fb'],
    ['café/日本.html', 'café/日本.html'],
    ['emoji-😀.png', 'emoji-😀.png'],
    ['with space.html', 'with space.html'],
    ['ab:c.html', 'ab:c.html'],
    ['C', 'C'],
    ['x'.repeat(255), 'x'.repeat(255)],
    [`${'d'.repeat(200)}/`.repeat(5).slice(0, -1), `${'d'.repeat(200)}/`.repeat(5).slice(0, -1)],
  ])('accepts %j as %j', (raw, path) => {
    expect(checkArchivePath(raw)).toEqual({ ok: true, path });
  });

  it.each([
    ['', 'empty path'],
    ['.', 'names no file'],
    ['./', 'names no file'],
    ['//', 'network (UNC)'],
    ['../x', 'climbs out of the site folder'],
    ['..', 'climbs out of the site folder'],
    ['a/../b', 'climbs out of the site folder'],
    ['a/b/../../../etc/passwd', 'climbs out of the site folder'],
    ['a/..', 'climbs out of the site folder'],
    ['./../x', 'climbs out of the site folder'],
    ['a\\..\\b', 'climbs out of the site folder'],
    ['..\\x', 'climbs out of the site folder'],
    ['a/..\\b', 'climbs out of the site folder'],
    ['/etc/passwd', 'is absolute'],
    ['/', 'is absolute'],
    ['\\x', 'is absolute'],
    ['C:\\Windows\\x.exe', 'Windows drive letter'],
    ['C:/Windows/x', 'Windows drive letter'],
    ['c:x', 'Windows drive letter'],
    ['z:', 'Windows drive letter'],
    ['a:b.html', 'Windows drive letter'],
    ['\\\\server\\share\\x', 'network (UNC)'],
    ['//server/share/x', 'network (UNC)'],
    ['\\/server/x', 'network (UNC)'],
    ['a\\b.html', 'backslash'],
    ['dir\\', 'backslash'],
    ['a\u0000.html', 'control character'],
    ['index.html\u0000.png', 'control character'],
    ['a\nb', 'control character'],
    ['a\rb', 'control character'],
    ['a\tb', 'control character'],
    ['a\u001bb', 'control character'],
    ['a\u007fb', 'control character'],
    ['a\u0085b', 'control character'],
    ['a\ud800b', 'not valid Unicode'],
    ['x'.repeat(256), 'longer than 255 bytes'],
    ['é'.repeat(128), 'longer than 255 bytes'],
    [`${'d'.repeat(200)}/`.repeat(6), 'longer than 1024 bytes'],
  ])('rejects %j (%s)', (raw, reason) => {
    const result = checkArchivePath(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });

  it('names the path in the reason', () => {
    expect(checkArchivePath('../x')).toEqual({
      ok: false,
      reason: 'Path "../x" climbs out of the site folder with "..".',
    });
  });

  it('shows control characters escaped in the reason', () => {
    const result = checkArchivePath('a\u0000b');
    expect(!result.ok && result.reason).toBe('Path "a\\u0000b" contains a control character such as NUL or a line break.');
  });
});

describe('findCaseDuplicate', () => {
  it.each([
    ['letter case', ['index.html', 'Index.html'], ['index.html', 'Index.html']],
    ['folder case', ['img/a.png', 'IMG/a.png'], ['img/a.png', 'IMG/a.png']],
    ['all capitals', ['a.html', 'b.html', 'B.HTML'], ['b.html', 'B.HTML']],
    ['non-ASCII case', ['ÉTÉ.html', 'été.html'], ['ÉTÉ.html', 'été.html']],
    ['Greek case', ['ΣΟΦΙΑ.html', 'σοφια.html'], ['ΣΟΦΙΑ.html', 'σοφια.html']],
    ['NFD against NFC', ['cafe\u0301.html', 'caf\u00e9.html'], ['cafe\u0301.html', 'caf\u00e9.html']],
    ['sharp s', ['straße.html', 'STRASSE.html'], ['straße.html', 'STRASSE.html']],
    ['Kelvin sign', ['\u212a.html', 'k.html'], ['\u212a.html', 'k.html']],
    ['the same path twice', ['a.html', 'a.html'], ['a.html', 'a.html']],
  ])('finds paths equal apart from %s', (_name, paths, pair) => {
    expect(findCaseDuplicate(paths)).toEqual(pair);
  });

  it.each([
    ['distinct names', ['index.html', 'about.html', 'img/a.png']],
    ['the same name in two folders', ['a/index.html', 'b/index.html']],
    ['similar but different names', ['a.html', 'a.htm', 'a_.html']],
    ['no paths', []],
  ])('finds nothing among %s', (_name, paths) => {
    expect(findCaseDuplicate(paths)).toBeUndefined();
  });

  it('accepts any iterable', () => {
    expect(findCaseDuplicate(new Set(['A', 'a']))).toEqual(['A', 'a']);
  });
});

describe('stripCommonTopFolder', () => {
  it.each([
    ['one folder', ['site/index.html', 'site/css/a.css'], 'site/', ['index.html', 'css/a.css']],
    ['a single file in a folder', ['dist/index.html'], 'dist/', ['index.html']],
    ['only one level', ['a/b/index.html', 'a/b/c.css'], 'a/', ['b/index.html', 'b/c.css']],
    [
      'Finder junk beside the folder',
      ['site/index.html', '__MACOSX/site/._index.html', '.DS_Store'],
      'site/',
      ['index.html', '__MACOSX/site/._index.html', '.DS_Store'],
    ],
    ['a repository beside the folder', ['.git/config', 'public/index.html', 'Thumbs.db'], 'public/', ['.git/config', 'index.html', 'Thumbs.db']],
    ['skipped files inside the folder', ['site/index.html', 'site/.DS_Store', 'site/app.js.map'], 'site/', ['index.html', '.DS_Store', 'app.js.map']],
    ['a folder with a dot inside its name', ['my.site/index.html'], 'my.site/', ['index.html']],
  ])('strips %s', (_name, paths, prefix, stripped) => {
    expect(stripCommonTopFolder(paths)).toEqual({ prefix, paths: stripped });
  });

  it.each([
    ['files at the root', ['index.html', 'css/a.css']],
    ['a single file at the root', ['index.html']],
    ['two top folders', ['a/index.html', 'b/index.html']],
    ['folder names differing in case', ['Site/index.html', 'site/a.css']],
    ['no files', []],
    ['only skipped files', ['.git/config', '__MACOSX/x/._a', '.DS_Store']],
    ['only .well-known', ['.well-known/security.txt']],
    ['a published root file next to the folder', ['site/index.html', 'robots.txt']],
  ])('does not strip %s', (_name, paths) => {
    expect(stripCommonTopFolder(paths)).toEqual({ prefix: undefined, paths });
  });

  it('does not change its input', () => {
    const paths = ['site/index.html'];
    stripCommonTopFolder(paths);
    expect(paths).toEqual(['site/index.html']);
  });
});
