// The MCP protocol side: the SDK's low-level Server with our JSON schemas. Bad arguments become
// JSON-RPC "invalid params" errors naming the field; refusals and gateway failures become tool
// results with isError, so the agent reads why (and that nothing was sent, or that it may have been charged).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type CallToolResult, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError, summarizeError, ValidationError } from '../../core/errors';
import { capLine, CapRefusal, FailureWithRecovery, type ImageTools, type ToolAnswer } from './imageTools';
import { TOOL_SCHEMAS } from './toolSchemas';

export const SERVER_NAME = 'gateway-images';

/** Resource links in tool results are part of the protocol from this version on. */
const RESOURCE_LINKS_SINCE = '2025-06-18';

/** `clientProtocol` is the protocol version the client asked for in `initialize`. */
export function createMcpServer(
  tools: ImageTools,
  version: string,
  redact: (text: string) => string,
  clientProtocol: () => string | undefined = () => undefined,
): Server {
  const server = new Server(
    { name: SERVER_NAME, title: 'Gateway Images', version },
    {
      capabilities: { tools: {} },
      // Used by the SDK only for elicitation answers, which this server never requests (and the
      // bundle leaves ajv, the SDK's default, out: see esbuild.mjs).
      jsonSchemaValidator: { getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'This server requests no elicitation.' }) },
      instructions:
        "Image generation and editing through the user's API gateway, billed in rubles. Call estimate_cost before generate_image or edit_image; every paid call is held against a per-call and per-session spending cap. Paths are relative to the workspace folder.",
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOL_SCHEMAS.map(({ name, title, description, inputSchema, annotations }) => ({
      name,
      title,
      description,
      inputSchema,
      annotations: { title, ...annotations },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const progressToken = request.params._meta?.progressToken;
    let step = 0;
    const progress =
      progressToken === undefined
        ? undefined
        : (message: string) =>
            void extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: ++step, message } }).catch(() => undefined);
    try {
      const links = (clientProtocol() ?? '') >= RESOURCE_LINKS_SINCE;
      return toResult(await tools.call(request.params.name, request.params.arguments, { signal: extra.signal, progress }), redact, links);
    } catch (error) {
      if (error instanceof ValidationError) {
        const allowed = error.allowed?.length ? error.allowed : undefined;
        throw new InvalidParams(redact(error.message), { field: error.field, ...(allowed ? { allowed } : {}) });
      }
      return failure(error, tools, redact);
    }
  });
  return server;
}

/**
 * A JSON-RPC "invalid params" error (-32602). Not the SDK's McpError: that one prefixes its message
 * with "MCP error -32602:", and the client adds the same prefix again.
 */
class InvalidParams extends Error {
  readonly code = ErrorCode.InvalidParams;
  constructor(
    message: string,
    readonly data: { field: string; allowed?: readonly (string | number)[] },
  ) {
    super(message);
  }
}

function toResult(answer: ToolAnswer, redact: (text: string) => string, links: boolean): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: redact(answer.text) }];
  if (answer.preview) content.push({ type: 'image', data: answer.preview, mimeType: 'image/png' });
  if (links) for (const link of answer.links ?? []) content.push({ type: 'resource_link', ...link });
  return { content, structuredContent: answer.structured, ...(answer.isError ? { isError: true } : {}) };
}

function failure(thrown: unknown, tools: ImageTools, redact: (text: string) => string): CallToolResult {
  const cap = tools.cap.status();
  const recovered = thrown instanceof FailureWithRecovery ? thrown.recovered : undefined;
  const error = thrown instanceof FailureWithRecovery ? thrown.error : thrown;
  if (error instanceof CapRefusal) {
    return {
      isError: true,
      content: [{ type: 'text', text: `${error.message}\n${capLine(cap)}` }],
      structuredContent: { ...error.details, sent: false, spendingCap: cap },
    };
  }
  const summary = summarizeError(error);
  const notSent = summary.kind === 'cannot-afford' || summary.kind === 'not-configured' || summary.kind === 'cancelled';
  const sent = summary.outcomeUnknown
    ? 'The request may have been charged: call get_account to check the balance before trying again (it is never resent automatically).'
    : notSent
      ? 'Nothing was sent.'
      : error instanceof GatewayError
        ? 'Not charged.'
        : '';
  const saved = thrown instanceof FailureWithRecovery ? thrown.saved : [];
  const kept = [
    saved.length ? `${saved.length} paid image(s) arrived whole before the failure and are saved in the workspace: ${saved.join(', ')}` : '',
    recovered
      ? `${recovered.files.length} paid image(s) arrived before the failure; they are kept in ${recovered.manifestPath} (Gateway Images: Recover Unsaved Images in VS Code).`
      : '',
  ]
    .filter(Boolean)
    .join('\n');
  const text = [`Failed: ${summary.message}`, sent, kept, capLine(cap)].filter(Boolean).join('\n');
  return {
    isError: true,
    content: [{ type: 'text', text: redact(text) }],
    structuredContent: {
      error: { ...summary, message: redact(summary.message) },
      ...(recovered ? { recovered } : {}),
      ...(saved.length ? { saved } : {}),
      spendingCap: cap,
    },
  };
}
