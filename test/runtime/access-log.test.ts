import { describe, expect, it } from 'vitest';
import { accessLogPath, batchedLines } from '../../src/runtime/access-log.js';

describe('accessLogPath', () => {
  it.each([
    ['/', '/'],
    ['/about/team.html', '/about/team.html'],
    ['/v1/sites/blue-fox-1234/files', '/v1/sites/blue-fox-1234/files'],
    // Query strings carry sign-in codes, tickets and confirm tokens: never logged.
    ['/oauth/authorize?code=plc_abc&state=x', '/oauth/authorize'],
    ['/v1/sites/blue-fox-1234/members/a%40b.example?confirm=rm_abcdefghijklmnopqrstuvwx', '/v1/sites/blue-fox-1234/members/a%40b.example'],
    // Credentials in paths keep only their prefix.
    ['/claim/ct_Q2xhaW0gbGluayBvZiBhIHNpdGU', '/claim/ct_…'],
    ['/approve/ap_QXBwcm92YWwgb2YgYSBkZWxldGlvbg', '/approve/ap_…'],
    ['/invites/inv_SW52aXRlIHRvIGEgc2l0ZSBieSBh/accept', '/invites/inv_…/accept'],
    ['/v1/approvals/ap_QXBwcm92YWwgb2YgYSBkZWxldGlvbg', '/v1/approvals/ap_…'],
    // Short ids and ordinary names with an underscore stay.
    ['/rev_12/my_page.html', '/rev_12/my_page.html'],
    ['/' + 'a'.repeat(3000), '/' + 'a'.repeat(1023) + '…'],
  ])('%s is logged as %s', (url, logged) => {
    expect(accessLogPath(url)).toBe(logged);
  });
});

describe('batchedLines', () => {
  it('writes the lines of a period in one write, in order, and at once past its size', async () => {
    const writes: string[] = [];
    const line = batchedLines((text) => writes.push(text), { maxBytes: 10, flushMs: 20 });
    line('a\n');
    line('b\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(writes).toEqual(['a\nb\n']);
    line('0123456789\n');
    expect(writes).toEqual(['a\nb\n', '0123456789\n']);
    line('c\n');
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(writes).toEqual(['a\nb\n', '0123456789\n', 'c\n']);
  });
});
