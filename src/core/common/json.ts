// The one check for a JSON object (not null, not an array), shared by host, core and webview code.

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
