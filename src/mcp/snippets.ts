// Ready configuration for MCP clients outside VS Code, with this installation's server path and
// gateway address. Never the key: each snippet takes it from the user's shell environment.
export type McpClientName = 'claude-code' | 'cursor' | 'codex';

export const MCP_CLIENTS: readonly McpClientName[] = ['claude-code', 'cursor', 'codex'];

export interface SnippetInput {
  serverPath: string;
  baseUrl: string;
  maxCostPerCall: number;
  maxCostPerSession: number;
}

export function mcpClientSnippet(client: McpClientName, input: SnippetInput): string {
  const env = {
    GATEWAY_IMAGES_BASE_URL: input.baseUrl || 'https://gateway.example/',
    GATEWAY_IMAGES_MAX_COST_PER_CALL: String(input.maxCostPerCall),
    GATEWAY_IMAGES_MAX_COST_PER_SESSION: String(input.maxCostPerSession),
  };
  switch (client) {
    case 'claude-code':
      return [
        'claude mcp add gateway-images \\',
        ...Object.entries(env).map(([name, value]) => `  -e ${name}=${shellQuote(value)} \\`),
        '  -e GATEWAY_IMAGES_API_KEY="$GATEWAY_IMAGES_API_KEY" \\',
        `  -- node ${shellQuote(input.serverPath)}`,
      ].join('\n');
    case 'cursor':
      return JSON.stringify(
        {
          mcpServers: {
            'gateway-images': {
              command: 'node',
              args: [input.serverPath],
              env: { ...env, GATEWAY_IMAGES_API_KEY: '${env:GATEWAY_IMAGES_API_KEY}', GATEWAY_IMAGES_WORKSPACE: '${workspaceFolder}' },
            },
          },
        },
        null,
        2,
      );
    case 'codex':
      return [
        '[mcp_servers.gateway-images]',
        'command = "node"',
        `args = [${tomlString(input.serverPath)}]`,
        `env = { ${Object.entries(env)
          .map(([name, value]) => `${name} = ${tomlString(value)}`)
          .join(', ')} }`,
        'env_vars = ["GATEWAY_IMAGES_API_KEY"]',
        'tool_timeout_sec = 600',
      ].join('\n');
  }
}

function shellQuote(value: string): string {
  return /^[\w./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function tomlString(value: string): string {
  return JSON.stringify(value);
}
