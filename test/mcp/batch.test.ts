import { describe, expect, it } from 'vitest';
import { allowsBatches, judgeBatch } from '../../src/mcp/batch.js';

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
const note = { jsonrpc: '2.0', method: 'notifications/initialized' };
const initialize = (protocolVersion: unknown) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const claiming = (revision: unknown) => ({ ...call(9), params: { _meta: { 'io.modelcontextprotocol/protocolVersion': revision } } });

describe('allowsBatches', () => {
  it.each([
    ['2024-10-07', false],
    ['2024-11-05', false],
    ['2025-03-26', true],
    ['2025-06-18', false],
    ['2025-11-25', false],
    ['2026-07-28', false],
    ['2025-03-26 ', false],
    ['', false],
  ])('%j: %s', (revision, allowed) => {
    expect(allowsBatches(revision)).toBe(allowed);
  });
});

describe('judgeBatch', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => call(i));

  it.each<[string, unknown[], string | undefined, number, number | RegExp]>([
    ['no header: the spec says assume 2025-03-26', [call(1), call(2)], undefined, 20, 2],
    ['header 2025-03-26', [call(1), note], '2025-03-26', 20, 2],
    ['notifications only', [note, note, note], '2025-03-26', 20, 3],
    ['exactly the cap', many(20), '2025-03-26', 20, 20],
    ['cap 0: no cap of ours', many(100), undefined, 0, 100],
    ['header 2024-11-05', [call(1)], '2024-11-05', 20, /^JSON-RPC batching is not supported in protocol revision 2024-11-05 \(only in 2025-03-26\)/],
    ['header 2025-06-18', [call(1)], '2025-06-18', 20, /not supported in protocol revision 2025-06-18/],
    ['header 2025-11-25', [call(1), call(2)], '2025-11-25', 20, /not supported in protocol revision 2025-11-25/],
    ['header 2026-07-28', [call(1)], '2026-07-28', 20, /not supported in protocol revision 2026-07-28/],
    ['a member claiming 2026-07-28 without a header', [call(1), claiming('2026-07-28')], undefined, 20, /not supported in protocol revision 2026-07-28/],
    ['a member claiming 2026-07-28 under a 2025-03-26 header', [claiming('2026-07-28')], '2025-03-26', 20, /not supported in protocol revision 2026-07-28/],
    ['a malformed claim', [claiming(20260728)], undefined, 20, /not supported in the protocol revision named/],
    [
      'a header that is no revision is not echoed',
      [call(1)],
      '<script>'.repeat(50),
      20,
      /^JSON-RPC batching is not supported in the protocol revision named \(only/,
    ],
    ['an empty header', [call(1)], '', 20, /not supported in the protocol revision named/],
    ['an initialize naming 2025-11-25', [initialize('2025-11-25'), call(1)], undefined, 20, /not supported in protocol revision 2025-11-25/],
    ['an initialize naming 2025-03-26, alone', [initialize('2025-03-26')], undefined, 20, /^initialize must not be part of a JSON-RPC batch/],
    ['an initialize naming 2025-03-26, mixed in', [call(1), initialize('2025-03-26')], '2025-03-26', 20, /^initialize must not be part of a JSON-RPC batch/],
    ['an initialize naming no revision', [initialize(undefined), call(1)], undefined, 20, /^initialize must not be part of a JSON-RPC batch/],
    ['empty', [], undefined, 20, /^An empty JSON-RPC batch/],
    ['empty, in a revision without batches', [], '2025-06-18', 20, /not supported in protocol revision 2025-06-18/],
    ['a nested batch', [[call(1)]], undefined, 20, /^Every member of a JSON-RPC batch must be a JSON-RPC message object/],
    ['numbers, strings and null', [1, 'x', null], undefined, 20, /^Every member/],
    ['a repeated id', [call(1), note, call(1)], undefined, 20, /^Every request in a JSON-RPC batch needs an id of its own/],
    ['ids 1 and "1" (different ids)', [call(1), { ...call(1), id: '1' }], undefined, 20, 2],
    ['a response beside a request with its id (no request of ours to answer)', [call(1), { jsonrpc: '2.0', id: 1, result: {} }], undefined, 20, 2],
    ['one past the cap', many(21), '2025-03-26', 20, /^A JSON-RPC batch may carry at most 20 messages/],
    ['far past the cap', many(5000), undefined, 20, /at most 20 messages/],
  ])('%s', (_, members, header, max, expected) => {
    const verdict = judgeBatch(members, header, max);
    if (typeof expected === 'number') expect(verdict).toEqual({ ok: true, calls: expected });
    else expect(verdict.ok ? 'served' : verdict.message).toMatch(expected);
  });
});
