import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { compileBodyCheck, problemDetails, type BodyCheck, type BodyProblem } from '../contract/index.js';
import { ServiceError, toErrorBody } from '../errors.js';
import type { Logger } from '../log.js';
import type { ToolContext, ToolSpec } from './tool-spec.js';
import { inToolWords } from './tool-words.js';

const SERVER_INFO = { name: 'plinth', title: 'Plinth', version: '0.1.0' };

const INSTRUCTIONS =
  'Plinth publishes static websites. deploy_site uploads the files of a site (HTML, CSS, JS, images) and returns its live address. ' +
  'To change a site later, call get_site for its live revision and deploy on top of it (patch: true sends only what changed). ' +
  'To let the user check a change first, deploy it with publish: false, show them its preview_url, then promote_site. ' +
  'Show the user every agent_message, with its links unchanged.';

/**
 * The tool table compiled once per thread: the MCP listing and a check of each tool's input, the
 * same check (and the same words) as the REST edge's of a route's body.
 */
export interface ToolCatalogue {
  listing: Tool[];
  byName: Map<string, { spec: ToolSpec; check: BodyCheck }>;
}

export function compileTools(specs: readonly ToolSpec[]): ToolCatalogue {
  const byName = new Map<string, { spec: ToolSpec; check: BodyCheck }>();
  for (const spec of specs) byName.set(spec.name, { spec, check: compileBodyCheck(spec.inputSchema, 'The arguments') });
  const listing = specs.map((spec) => ({
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: spec.inputSchema as Tool['inputSchema'],
    outputSchema: spec.outputSchema as Tool['outputSchema'],
    annotations: { title: spec.title, ...spec.annotations },
  }));
  return { listing, byName };
}

/**
 * A fresh MCP server for one HTTP request (stateless: nothing of one request can reach another's
 * response). Tool failures are results with `isError: true` carrying the REST error's words.
 */
export function createToolServer(catalogue: ToolCatalogue, context: ToolContext, log: Logger): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });

  server.setRequestHandler('tools/list', async () => ({ tools: catalogue.listing }));

  server.setRequestHandler('tools/call', async (request): Promise<CallToolResult> => {
    const tool = catalogue.byName.get(request.params.name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}. tools/list names the tools.`);
    const args = request.params.arguments ?? {};
    try {
      // A large deploy's arguments, left unparsed, are checked by the ingest worker against the same schema.
      const unparsed = tool.spec.name === 'deploy_site' && context.deployArguments !== undefined;
      const problem = unparsed ? undefined : tool.check(args);
      if (problem !== undefined) throw invalidArguments(tool.spec, problem);
      const result = inToolWordsOf(await tool.spec.run(context, args));
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
    } catch (err) {
      return errorResult(err, log, tool.spec.name);
    }
  });

  return server;
}

/** A successful answer's agent message names the tools too. */
function inToolWordsOf(result: unknown): unknown {
  if (typeof result !== 'object' || result === null || !('agent_message' in result) || typeof result.agent_message !== 'string') return result;
  return { ...result, agent_message: inToolWords(result.agent_message) };
}

function invalidArguments(spec: ToolSpec, problem: BodyProblem): ServiceError {
  return new ServiceError('bad_request', `${spec.name}: ${problem.message}`, {
    details: problemDetails(problem),
    agentMessage: `Check the arguments of ${spec.name} against its input schema (tools/list) and call it again.`,
  });
}

/** The REST error's code, message, agent message and details, as a tool result. */
export function errorResult(err: unknown, log: Logger, tool: string): CallToolResult {
  const { body, headers, internal } = toErrorBody(err);
  if (internal) log.error({ err, tool }, 'mcp.tool_failed');
  else log.debug({ tool, code: body.error.code }, 'mcp.tool_refused');
  // The operations' words name REST calls; here the same calls are tools.
  let text = `${body.error.code}: ${inToolWords(body.error.message)}`;
  if (body.agent_message) text += `\n${inToolWords(body.agent_message)}`;
  // A tool result has no headers: the wait REST gives as Retry-After (429, 503) is said here, as
  // the agent message's "Retry-After" has nothing else to point at.
  const wait = headers['Retry-After'];
  if (wait !== undefined) text += `\n${retryAfterLine(wait)}`;
  if (body.error.details) text += `\nDetails: ${JSON.stringify(body.error.details)}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** How long to wait before the same call, in the words of a tool result. */
export const retryAfterLine = (seconds: string): string => `Retry-After: ${seconds} seconds. Wait that long, then make the same call again.`;
