// The MCP server's side of project styles: what list_styles answers, and a style applied to a
// call's arguments through the one resolution (jobs/styledRequest.ts). The workspace is trusted
// unless VS Code said otherwise; then a style is read but never sends on its own. Without a styles
// file, the built-in starter styles (as in the extension: never beside a project's). Pure: no vscode import.
import type { CatalogCache } from '../../core/gateway/catalogCache';
import { ValidationError } from '../../core/gateway/errors';
import { isStarterSource, starterSource } from '../../core/requests/starterStyles';
import { readStyles, resolveStyle, styleNames, type StylesSource } from '../../core/requests/styleFile';
import { stylesOnOffer } from '../../core/requests/styleOffer';
import { resolveStyledRequest, type StyledRequest, type StyleInput } from '../../jobs/styledRequest';
import type { ListStylesAnswer } from './toolDefinitions';

export class WorkspaceStyles {
  constructor(
    private readonly root: string,
    private readonly trusted: boolean,
    private readonly catalog: CatalogCache,
  ) {}

  /** The project's styles, else the starters the catalog makes (`preferred`: the call's model, when it makes them). */
  private async source(preferred?: string): Promise<StylesSource | undefined> {
    const project = await readStyles(this.root, this.trusted);
    if (project) return project;
    const models = await this.catalog.get().catch(() => []);
    return stylesOnOffer(undefined, () => starterSource(this.root, models, preferred || undefined));
  }

  /** list_styles: each style with `extends` applied, or why it cannot be used. */
  async list(): Promise<{ text: string; structured: Omit<ListStylesAnswer, 'spendingCap'> }> {
    const source = await this.source();
    if (!source) return { text: 'This workspace has no styles: .gateway-images/styles.json does not exist.', structured: { styles: [] } };
    if (source.fileError) throw source.fileError;
    const styles: NonNullable<ListStylesAnswer['styles']> = styleNames(source).map((name) => {
      try {
        return { name, values: { ...resolveStyle(source, name) } };
      } catch (error) {
        return { name, error: error instanceof Error ? error.message : String(error) };
      }
    });
    const lines = styles.map((s) =>
      s.error
        ? `- ${s.name}: cannot be used: ${s.error}`
        : `- ${s.name}${s.values?.description ? `: ${s.values.description}` : ''}${s.values?.model ? ` (model ${s.values.model})` : ''}`,
    );
    if (isStarterSource(source)) {
      const intro = `This workspace has no styles file (.gateway-images/styles.json): ${styles.length} built-in style(s) apply until it has one:`;
      return { text: [intro, ...lines].join('\n'), structured: { file: source.file, builtIn: true, styles, trusted: this.trusted } };
    }
    const trust = this.trusted ? [] : ['The workspace is not trusted in VS Code: styles are listed and estimated, but a paid call with a style is refused.'];
    return {
      text: [`${styles.length} style(s) in ${source.file}:`, ...lines, ...trust].join('\n'),
      structured: { file: source.file, styles, trusted: this.trusted },
    };
  }

  /** The style (or none) applied; a model it names that the cached catalog lacks may be new: the catalog is read once more. */
  async apply(style: string | undefined, input: StyleInput): Promise<StyledRequest> {
    // Without a style nothing is checked against the catalog here: the job does that.
    if (!style) return resolveStyledRequest(undefined, undefined, input, []);
    const source = await this.source(input.model);
    try {
      return await resolveStyledRequest(source, style, input, await this.catalog.get());
    } catch (error) {
      if (!(error instanceof ValidationError && error.field === 'style.model' && error.kind === 'unknown-model')) throw error;
      return resolveStyledRequest(source, style, input, await this.catalog.refresh());
    }
  }
}
