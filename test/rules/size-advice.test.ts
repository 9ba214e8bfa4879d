import { describe, expect, it } from 'vitest';
import { accountAllowsMore, PLAN_LIMITS, siteTooLarge, sizeWords } from '../../src/rules/index.js';
import { checkTier } from '../../src/sites/limits.js';

const MB = 1024 * 1024;

describe('size words', () => {
  it.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [1536, '1.5 KB'],
    [5 * MB, '5 MB'],
    [4 * MB + 100, '4 MB'],
    [25 * 1024 * MB, '25 GB'],
  ])('%i bytes is %s', (bytes, words) => {
    expect(sizeWords(bytes)).toBe(words);
  });
});

describe('a site over its limit', () => {
  it('names the largest files, the limit, how much must go and what fits, whatever the archive order', () => {
    const words = siteTooLarge(
      [
        { file: 'a.html', size: 100 },
        { file: 'big.js', size: 3 * MB },
        { file: 'crossing.css', size: 3 * MB - 200 },
      ],
      5 * MB,
      { anonymous: false, complete: true },
    );
    expect(words.details.file).toBe('big.js');
    expect(words.agentMessage).toContain('so 1024 KB must go');
    expect(words.agentMessage).toContain('The largest files: big.js (3 MB), crossing.css (3 MB), a.html (100 bytes).');
    expect(words.agentMessage).toContain('Without big.js it would be 3 MB, which fits.');
  });

  it('says "at least" when counting stopped early, and promises no fit', () => {
    const words = siteTooLarge([{ file: 'x.bin', size: 9 * MB }], 5 * MB, { anonymous: false, complete: false });
    expect(words.message).toBe("The site's files add up to at least 9 MB; the limit per site is 5 MB.");
    expect(words.agentMessage).not.toContain('which fits');
  });

  it('tells a deploy without an account what an account allows', () => {
    expect(siteTooLarge([{ file: 'x.bin', size: 2 * MB }], MB, { anonymous: true, complete: true }).agentMessage).toContain(
      'a free account allows 5 MB per site',
    );
    expect(accountAllowsMore('files')).toContain(`a free account allows ${PLAN_LIMITS.free.maxFiles}`);
  });

  it('is what a patch over the limit is told too', () => {
    const files = new Map([
      ['index.html', { sha256: 'a', size: 10, type: 'text/html' }],
      ['video.mp4', { sha256: 'b', size: 2 * MB, type: 'video/mp4' }],
    ]);
    expect(() => checkTier(files, { ...PLAN_LIMITS.free, maxFileBytes: 5 * MB, maxSiteBytes: MB })).toThrow(/the limit per site is 1 MB/);
    try {
      checkTier(
        new Map([
          ['a.js', { sha256: 'a', size: 512 * 1024, type: 'text/javascript' }],
          ['b.js', { sha256: 'b', size: 600 * 1024, type: 'text/javascript' }],
        ]),
        PLAN_LIMITS.anonymous,
      );
      expect.unreachable();
    } catch (err) {
      expect((err as { agentMessage?: string }).agentMessage).toContain('create an account');
      expect((err as { agentMessage?: string }).agentMessage).not.toMatch(/larger plan/);
    }
  });
});
