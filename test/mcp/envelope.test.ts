import { describe, expect, it } from 'vitest';
import { splitArguments } from '../../src/mcp/envelope.js';

/** The large-body splitter: the envelope parsed, the arguments left as bytes, or undefined. */

const split = (text: string) => {
  const body = Buffer.from(text);
  const result = splitArguments(body);
  return result && { envelope: result.envelope, args: body.subarray(...result.argumentsRange).toString() };
};

describe('splitArguments', () => {
  it.each([
    [
      'a tools/call',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deploy_site","arguments":{"files":[{"path":"a","content":"x"}]}}}',
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'deploy_site', arguments: {} } },
      '{"files":[{"path":"a","content":"x"}]}',
    ],
    [
      'arguments before name, with whitespace',
      ' {\n "params" : { "arguments" : { "files" : [ ] } , "name" : "deploy_site" } , "method":"tools/call", "id": "x", "jsonrpc":"2.0" }\n',
      { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'deploy_site', arguments: {} } },
      '{ "files" : [ ] }',
    ],
    [
      'quotes, escapes and brackets inside strings',
      '{"id":1,"method":"tools/call","params":{"_meta":{"k":"}]"},"arguments":{"files":[{"path":"a\\"}b","content":"\\\\\\"{[ok]}\\\\"}]},"name":"deploy_site"},"jsonrpc":"2.0"}',
      { id: 1, method: 'tools/call', params: { _meta: { k: '}]' }, name: 'deploy_site', arguments: {} }, jsonrpc: '2.0' },
      '{"files":[{"path":"a\\"}b","content":"\\\\\\"{[ok]}\\\\"}]}',
    ],
    [
      'the last of duplicate arguments, as JSON.parse keeps',
      '{"id":1,"method":"tools/call","params":{"arguments":{"a":1},"name":"deploy_site","arguments":{"b":2}}}',
      { id: 1, method: 'tools/call', params: { name: 'deploy_site', arguments: {} } },
      '{"b":2}',
    ],
  ])('splits %s', (_name, text, envelope, args) => {
    expect(split(text)).toEqual({ envelope, args });
  });

  it.each([
    ['a batch', '[{"id":1,"method":"tools/call","params":{"arguments":{}}}]'],
    ['no arguments', '{"id":1,"method":"tools/list","params":{}}'],
    ['arguments that are not an object', '{"id":1,"method":"tools/call","params":{"arguments":[1,2]}}'],
    ['an unterminated string', '{"id":1,"method":"tools/call","params":{"arguments":{"a":"b}}}'],
    ['trailing garbage', '{"id":1,"method":"tools/call","params":{"arguments":{}}} x'],
    ['a missing colon', '{"id" 1}'],
    ['an empty body', ''],
  ])('gives up on %s', (_name, text) => {
    expect(split(text)).toBeUndefined();
  });

  it('leaves a broken envelope to the full parse to report', () => {
    expect(split('{"id":1,"method":tools/call,"params":{"arguments":{}}}')).toBeUndefined();
  });
});
