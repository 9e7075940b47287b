// VS Code's settings files: JSON with comments and trailing commas. Pure: no vscode import.
import { isRecord } from './json';

/** The value of a JSON-with-comments text, or undefined when it does not parse. */
export function parseJsonc(text: string): unknown {
  let json = '';
  let commaPending = false;
  for (let i = 0; i < text.length;) {
    const c = text[i]!;
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (/\s/.test(c)) {
      json += c;
      i++;
    } else {
      // A comma is written once the next token shows it is not a trailing one.
      if (commaPending && c !== '}' && c !== ']') json += ',';
      commaPending = c === ',';
      let end = i + 1;
      if (c === '"') {
        while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
        end++;
      }
      if (!commaPending) json += text.slice(i, end);
      i = end;
    }
  }
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Whether a settings object sets `name` (like `gatewayImages.mcp.maxCostPerCall`), written dotted
 * or nested at any of its dots, as VS Code accepts both.
 */
export function setsSetting(settings: unknown, name: string): boolean {
  if (!isRecord(settings)) return false;
  const parts = name.split('.');
  for (let split = 1; split <= parts.length; split++) {
    const value = settings[parts.slice(0, split).join('.')];
    if (split === parts.length ? value !== undefined : setsSetting(value, parts.slice(split).join('.'))) return true;
  }
  return false;
}
