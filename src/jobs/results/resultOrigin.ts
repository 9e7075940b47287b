// Who made a result: the entry point that started its job (and, for an agent over MCP, the client's
// name from `initialize`; for a prompt file, its file and line). Kept in the result's journal entry;
// entries written before this existed have none and read as "unknown". No vscode import.
import * as l10n from '@vscode/l10n';

/** The entry points that start paid jobs. `palette`: a command (the palette, a keybinding, another extension's call). */
export const ORIGIN_KINDS = ['palette', 'studio', 'edit', 'markdown', 'promptFile', 'compare', 'chat', 'mcp'] as const;
export type OriginKind = (typeof ORIGIN_KINDS)[number];

export interface ResultOrigin {
  kind: OriginKind;
  /** MCP: the client's name from `initialize` (clientInfo.name). */
  client?: string;
  /** A prompt file: its path (as the run named it) and 1-based line. */
  file?: string;
  line?: number;
}

/** What a search or the ledger groups by: the kind, and for MCP the client ("mcp:Claude Code"); "unknown" for old entries. */
export type OriginKey = string;
export const UNKNOWN_ORIGIN: OriginKey = 'unknown';

/** As read from the journal: a damaged or unknown `origin` (another version's) is "unknown". */
export function originKey(origin: ResultOrigin | undefined): OriginKey {
  if (typeof origin !== 'object' || origin === null || !(ORIGIN_KINDS as readonly string[]).includes(origin.kind)) return UNKNOWN_ORIGIN;
  return origin.kind === 'mcp' && typeof origin.client === 'string' && origin.client ? `mcp:${origin.client}` : origin.kind;
}

/** The name of a kind, in the display language. */
export function originKindLabel(kind: OriginKey): string {
  switch (kind) {
    case 'palette':
      return l10n.t('Palette or command');
    case 'studio':
      return l10n.t('Image Studio');
    case 'edit':
      return l10n.t('Edit Image');
    case 'markdown':
      return l10n.t('Markdown selection');
    case 'promptFile':
      return l10n.t('Prompt file');
    case 'compare':
      return l10n.t('Compare Models');
    case 'chat':
      return l10n.t('Chat tool');
    case 'mcp':
      return l10n.t('MCP');
    default:
      return l10n.t('unknown');
  }
}

/** A group of the ledger or the search, by its key: "MCP: Claude Code", "Prompt file", "unknown". */
export function originKeyLabel(key: OriginKey): string {
  if (key.startsWith('mcp:')) return l10n.t('MCP: {0}', key.slice(4));
  return originKindLabel(key);
}

/** One result's origin in full: the MCP client, or the prompt file's name and line. */
export function originLabel(origin: ResultOrigin | undefined): string {
  const key = originKey(origin);
  if (key === 'promptFile' && typeof origin?.file === 'string') return l10n.t('Prompt file {0}, line {1}', baseName(origin.file), origin.line ?? '?');
  return originKeyLabel(key);
}

const baseName = (file: string) => file.split(/[\\/]/).pop() ?? file;
