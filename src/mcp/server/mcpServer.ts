// The MCP protocol side: the SDK's McpServer with one registerTool per tool (toolDefinitions.ts).
// The SDK refuses bad arguments (as a tool error naming the field) and checks every answer against
// its outputSchema. Refusals and gateway failures become tool results with isError, so the agent
// reads why, and whether nothing was sent or it may have been charged.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError, SpendingCapError, summarizeError, ValidationError } from '../../core/gateway/errors';
import { stoppedByProxy, untrustedCertificate } from '../../core/gateway/networkErrors';
import { ENV } from './config';
import type { ImageTools } from './imageTools';
import { type CallContext, capLine, PaidCallFailure, type ToolAnswer } from './toolAnswers';
import { TOOLS } from './toolDefinitions';

export const SERVER_NAME = 'gateway-images';

/** Resource links in tool results are part of the protocol from this version on. */
const RESOURCE_LINKS_SINCE = '2025-06-18';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** `clientProtocol` is the protocol version the client asked for in `initialize`. */
export function createMcpServer(
  tools: ImageTools,
  version: string,
  redact: (text: string) => string,
  clientProtocol: () => string | undefined = () => undefined,
  log: (line: string) => void = () => undefined,
): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, title: 'Gateway Images', version },
    {
      capabilities: { tools: {}, logging: {} },
      // Used by the SDK only for elicitation answers, which this server never requests (and the
      // bundle leaves ajv, the SDK's default, out: see esbuild.mjs). Tool answers are checked with zod.
      jsonSchemaValidator: { getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'This server requests no elicitation.' }) },
      instructions:
        "Image generation and editing through the user's API gateway, billed in rubles. Call estimate_cost (with the same arguments) before generate_image or edit_image; every paid call is held against a per-call and per-session spending cap. Paths are relative to the workspace folder.",
    },
  );
  const respond = async <T>(call: () => Promise<ToolAnswer<T>>, paid: boolean): Promise<CallToolResult> => {
    try {
      return toResult(await tools.admit(call), redact, (clientProtocol() ?? '') >= RESOURCE_LINKS_SINCE);
    } catch (error) {
      return failure(error, tools, redact, paid);
    }
  };
  const contextOf = (extra: Extra, tool: string): CallContext => {
    const progressToken = extra._meta?.progressToken;
    let step = 0;
    const client = server.server.getClientVersion()?.name;
    return {
      signal: extra.signal,
      ...(client ? { client } : {}),
      progress:
        progressToken === undefined
          ? undefined
          : (message) =>
              void extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: ++step, message } }).catch(() => undefined),
      notify: (message) => {
        log(`${tool}: ${message}`);
        void server.sendLoggingMessage({ level: 'warning', logger: SERVER_NAME, data: redact(`${tool}: ${message}`) }).catch(() => undefined);
      },
    };
  };

  server.registerTool('list_models', TOOLS.list_models, (args) => respond(() => tools.listModels(args), false));
  server.registerTool('list_styles', TOOLS.list_styles, () => respond(() => tools.listStyles(), false));
  server.registerTool('estimate_cost', TOOLS.estimate_cost, (args) => respond(() => tools.estimate(args), false));
  server.registerTool('generate_image', TOOLS.generate_image, (args, extra) => respond(() => tools.generate(args, contextOf(extra, 'generate_image')), true));
  server.registerTool('edit_image', TOOLS.edit_image, (args, extra) => respond(() => tools.edit(args, contextOf(extra, 'edit_image')), true));
  server.registerTool('get_account', TOOLS.get_account, () => respond(() => tools.account(), false));
  return server;
}

function toResult<T>(answer: ToolAnswer<T>, redact: (text: string) => string, links: boolean): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: redact(answer.text) }];
  if (answer.preview) content.push({ type: 'image', data: answer.preview, mimeType: 'image/png' });
  if (links) for (const link of answer.links ?? []) content.push({ type: 'resource_link', ...link });
  return { content, structuredContent: answer.structured as Record<string, unknown> };
}

/** A tool error result: why, whether anything was sent, what was kept, and the allowance. */
function failure(thrown: unknown, tools: ImageTools, redact: (text: string) => string, paid: boolean): CallToolResult {
  const cap = tools.cap.status();
  const paidFailure = thrown instanceof PaidCallFailure ? thrown : undefined;
  const error = paidFailure ? paidFailure.error : thrown;
  const summary = summarizeError(error);
  const sent = paidFailure?.sent ?? false;
  const saved = paidFailure?.saved ?? [];
  const recovered = paidFailure?.recovered;
  const outcome = summary.outcomeUnknown
    ? 'The request may have been charged: call get_account to check the balance before trying again (it is never resent automatically).'
    : !sent && (paid || error instanceof ValidationError)
      ? 'Nothing was sent.'
      : paid && stoppedByProxy(error)
        ? 'Not charged: the proxy refused the request before it reached the gateway.'
        : paid && error instanceof GatewayError
          ? 'Not charged.'
          : '';
  const kept = [
    saved.length ? `${saved.length} paid image(s) arrived whole before the failure and are saved in the workspace: ${saved.map((f) => f.path).join(', ')}` : '',
    recovered
      ? `${recovered.files.length} paid image(s) arrived before the failure; they are kept in ${recovered.manifestPath} (Gateway Images: Recover Unsaved Images in VS Code).`
      : '',
  ];
  const head = error instanceof SpendingCapError || error instanceof ValidationError ? summary.message : `Failed: ${summary.message}`;
  const text = [head, outcome, ...kept, connectionHint(error), capLine(cap)].filter(Boolean).join('\n');
  const allowed = error instanceof ValidationError && error.allowed?.length ? { allowed: [...error.allowed] } : {};
  return {
    isError: true,
    content: [{ type: 'text', text: redact(text) }],
    structuredContent: {
      error: { ...summary, ...allowed, message: redact(summary.message) },
      ...(paid ? { files: saved, sent, ...(recovered ? { recovered } : {}), ...(error instanceof SpendingCapError ? { refusedBy: error.cap } : {}) } : {}),
      spendingCap: cap,
    },
  };
}

/** The client's message names VS Code's settings; this server is set through its environment. */
function connectionHint(error: unknown): string {
  if (stoppedByProxy(error))
    return `For this server: set ${ENV.proxyAuthorization} (for example "Basic <base64 of user:password>"), or put the credentials in HTTPS_PROXY/HTTP_PROXY (http://user:password@host:port). Started by VS Code, it takes them from http.proxyAuthorization and http.proxy.`;
  if (untrustedCertificate(error))
    return `For this server: set NODE_EXTRA_CA_CERTS to the PEM file of the certificate authority in its environment, or add the authority to the system store and keep ${ENV.systemCertificates} on (the default). Started by VS Code, it gets NODE_EXTRA_CA_CERTS and http.systemCertificates from the extension.`;
  return '';
}
