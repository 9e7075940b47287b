// JSON that people write by hand, read with jsonc-parser (the parser VS Code itself uses): VS Code's
// settings files (comments and trailing commas allowed) and the project's styles file (plain JSON).
// A problem names its line and column and what is wrong, in the display language. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { parse, ParseErrorCode, type ParseError } from 'jsonc-parser';
import { isRecord } from './json';

/** Where a text is not what it should be (line and column from 1), what is wrong, and both in one sentence. */
export interface JsonProblem {
  line: number;
  column: number;
  what: string;
  /** "line 3, column 5: a comma expected" */
  message: string;
}

/**
 * The value of a settings file as VS Code reads it: comments and trailing commas allowed, and past
 * an error the part that could be read (VS Code applies that part too). The problems are given beside it.
 */
export function parseJsonc(text: string): { value: unknown; problems: JsonProblem[] } {
  const errors: ParseError[] = [];
  const value: unknown = parse(withoutBom(text), errors, { allowTrailingComma: true, disallowComments: false });
  return { value, problems: errors.map((error) => problemAt(text, error)) };
}

/** Plain JSON (a byte order mark is skipped): its value, or its first problem. */
export function parseJson(text: string): { value: unknown } | { problem: JsonProblem } {
  const errors: ParseError[] = [];
  const value: unknown = parse(withoutBom(text), errors, { allowTrailingComma: false, disallowComments: true, allowEmptyContent: false });
  return errors.length ? { problem: problemAt(text, errors[0]!) } : { value };
}

function withoutBom(text: string): string {
  return text.replace(/^\uFEFF/, '');
}

function problemAt(text: string, error: ParseError): JsonProblem {
  // The offset is in the text without its BOM; the place is counted in what the person sees.
  const before = withoutBom(text).slice(0, error.offset);
  const lines = before.split(/\r\n|\r|\n/);
  const line = lines.length;
  const column = lines[line - 1]!.length + 1;
  const what = whatIsWrong(error.error);
  return { line, column, what, message: l10n.t('line {0}, column {1}: {2}', line, column, what) };
}

function whatIsWrong(code: ParseErrorCode): string {
  switch (code) {
    case ParseErrorCode.InvalidSymbol:
      return l10n.t('unexpected character (text outside quotes, or single quotes)');
    case ParseErrorCode.InvalidNumberFormat:
      return l10n.t('a number written wrongly');
    case ParseErrorCode.PropertyNameExpected:
      return l10n.t('a property name in double quotes expected (or a comma too many)');
    case ParseErrorCode.ValueExpected:
      return l10n.t('a value expected (or a comma too many)');
    case ParseErrorCode.ColonExpected:
      return l10n.t('a colon expected after the property name');
    case ParseErrorCode.CommaExpected:
      return l10n.t('a comma expected');
    case ParseErrorCode.CloseBraceExpected:
      return l10n.t('a closing brace } expected');
    case ParseErrorCode.CloseBracketExpected:
      return l10n.t('a closing bracket ] expected');
    case ParseErrorCode.EndOfFileExpected:
      return l10n.t('text after the end of the value');
    case ParseErrorCode.InvalidCommentToken:
      return l10n.t('a comment, which JSON does not allow');
    case ParseErrorCode.UnexpectedEndOfComment:
      return l10n.t('a comment that is never closed');
    case ParseErrorCode.UnexpectedEndOfString:
      return l10n.t('a text that is never closed with a double quote');
    case ParseErrorCode.UnexpectedEndOfNumber:
      return l10n.t('a number that ends too early');
    case ParseErrorCode.InvalidUnicode:
      return l10n.t('a \\u escape without four hexadecimal digits');
    case ParseErrorCode.InvalidEscapeCharacter:
      return l10n.t('a backslash before a character that cannot be escaped');
    case ParseErrorCode.InvalidCharacter:
      return l10n.t('a line break or control character inside a text (write \\n or \\t)');
    default:
      return l10n.t('not valid JSON');
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
