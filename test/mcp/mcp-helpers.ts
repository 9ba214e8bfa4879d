import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { request, type TestResponse } from '../helpers/http.js';
import type { TestServer } from '../helpers/server.js';
import { loopbackFetch } from './loopback-fetch.js';

/** The MCP SDK's own client over streamable HTTP, with a bearer token. */
export async function connectClient(url: string, token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'plinth-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: loopbackFetch,
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });
  await client.connect(transport);
  return client;
}

/** A tool call's structured result, or the failure text when the tool refused. */
export function structured<T = Record<string, unknown>>(result: CallToolResult | Record<string, unknown>): T {
  const call = result as CallToolResult;
  if (call.isError) throw new Error(`tool refused: ${textOf(call)}`);
  return call.structuredContent as T;
}

export function textOf(result: CallToolResult | Record<string, unknown>): string {
  const content = (result as CallToolResult).content ?? [];
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** A raw JSON-RPC POST to the MCP host, for what clients normally hide (status codes, headers). */
export function rpc(
  server: TestServer,
  options: { path?: string; token?: string; body?: unknown; headers?: Record<string, string>; method?: string } = {},
): Promise<TestResponse & { json: any }> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return request({
    port: server.port,
    host: 'mcp.localhost',
    method: options.method ?? 'POST',
    path: options.path ?? '/mcp',
    headers: {
      accept: 'application/json, text/event-stream',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body,
  }).then((res) => {
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      json = undefined;
    }
    return Object.assign(res, { json });
  });
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
