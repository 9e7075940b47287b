// The styles of a prompt file's lines (`style` of a .jsonl line, or one style for a .txt file),
// applied through the one resolution before anything is sent: each line's problem is named with
// its line number, the style's file, the style and the field.
import * as vscode from 'vscode';
import type { BatchLine, BatchLineIssue } from '../../core/requests/batchFile';
import { ValidationError } from '../../core/gateway/errors';
import type { StylesSource } from '../../core/requests/styleFile';
import type { ImageModel } from '../../core/gateway/types';
import type { StyledRequest } from '../../jobs/styledRequest';
import { type Services } from '../../services';
import { loadStylesOrStarters, stylesCode } from '../styles/styles';

export interface StyledLines {
  lines: BatchLine[];
  issues: BatchLineIssue[];
  /** A style of an untrusted workspace is used: the run is confirmed whatever it costs. */
  confirm: boolean;
  /** What the styles say once (references not sent, output ignored). */
  notes: string[];
}

/** Every line with its style applied (and `fallbackModel` where neither the line nor its style names one). */
export async function styleLines(services: Services, file: vscode.Uri, lines: readonly BatchLine[], fallbackModel?: string): Promise<StyledLines> {
  const { resolveStyledRequest } = stylesCode();
  const { requestKey } = services.results();
  // Without a styles file, a line may name a built-in starter style (made with the run's model when it can).
  const source: StylesSource | undefined = lines.some((l) => l.style) ? await loadStylesOrStarters(services, file, true, fallbackModel) : undefined;
  let models: readonly ImageModel[] = await services.catalog.get();
  let refreshed = false;
  const resolve = async (line: BatchLine, model: string): Promise<StyledRequest> => {
    const { model: _model, prompt, input_references: _urls, ...options } = line.request;
    try {
      return await resolveStyledRequest(source, line.style, { prompt, model, options }, models);
    } catch (error) {
      // A model the style names that the cached catalog lacks may be new: read it once more.
      if (refreshed || !(error instanceof ValidationError && error.field === 'style.model' && error.kind === 'unknown-model')) throw error;
      refreshed = true;
      models = await services.catalog.refresh();
      return resolveStyledRequest(source, line.style, { prompt, model, options }, models);
    }
  };
  const result: StyledLines = { lines: [], issues: [], confirm: false, notes: [] };
  for (const line of lines) {
    try {
      let styled = await resolve(line, line.request.model);
      if (!styled.request.model && fallbackModel) styled = await resolve(line, fallbackModel);
      result.confirm ||= styled.confirm;
      for (const note of styled.notes) if (!result.notes.includes(note)) result.notes.push(note);
      result.lines.push({
        ...line,
        request: styled.request,
        key: requestKey(styled.request, styled.references),
        styled: { references: styled.references, output: styled.output, ...(styled.style ? { record: styled.style } : {}) },
      });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      result.issues.push({ line: line.line, field: error.field, message: error.message });
    }
  }
  return result;
}

/** "Styles: docs, hero" for the run's confirmation; empty without styles. */
export function describeLineStyles(lines: readonly BatchLine[]): string {
  const names = [...new Set(lines.map((l) => l.styled?.record?.name).filter((n): n is string => !!n))];
  return names.length ? vscode.l10n.t('Styles: {0}', names.join(', ')) : '';
}
