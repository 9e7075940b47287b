// Configures the translation of the pure modules (core, jobs, studio/view): they call `l10n.t` of
// @vscode/l10n, which knows nothing of VS Code until it is given the bundle VS Code loaded for the
// display language (vscode.l10n.bundle: undefined for English or a language without a bundle).
// @vscode/l10n and core/common/plural.ts are each one file in dist/ (esbuild.mjs, sharedModules), so this
// one call configures every bundle of the extension host. dist/mcp.js runs in its own process and
// stays English.
import * as l10n from '@vscode/l10n';
import * as vscode from 'vscode';
import { setPluralLanguage } from '../core/common/plural';

export function configureL10n(): void {
  l10n.config({ contents: vscode.l10n.bundle ?? {} });
  setPluralLanguage(vscode.env.language);
}
