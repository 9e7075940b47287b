// The styles file in the editor: "Gateway Images: Edit Styles" opens it (made with an example the
// first time), "Save as Style…" writes a style into it, and its JSON schema is served in the display
// language with the catalog's models as suggestions (package.json jsonValidation points here).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ValidationError } from '../../core/gateway/errors';
import type { StyleDefinition } from '../../core/requests/styleFile';
import { STYLES_FILE } from '../../core/requests/stylesPath';
import { type Services } from '../../services';
import { showError } from '../common/showError';
import { starterStylesCode } from './starterStylesChunk';
import { stylesCode, stylesRoot } from './styles';
import { messageText } from '../../core/common/markdownText';

/** The schema's address in package.json: `gateway-images-schema://schemas/styles.schema.json`. */
export const SCHEMA_SCHEME = 'gateway-images-schema';
const SCHEMA_URI = vscode.Uri.from({ scheme: SCHEMA_SCHEME, authority: 'schemas', path: '/styles.schema.json' });

/** What a new styles file holds: one example style to change, in the display language. */
function exampleStyle(): StyleDefinition {
  return {
    description: vscode.l10n.t('Flat illustrations for the documentation'),
    promptPrefix: vscode.l10n.t('Flat vector illustration:'),
    promptSuffix: vscode.l10n.t(', soft pastel colours, plain white background'),
    options: { n: 1, quality: 'high' },
    outputFolder: 'docs/images',
    fileNamePattern: '{slug}-{index}',
  };
}

export function registerStyles(services: Services): vscode.Disposable {
  const schema = new SchemaFileSystem(services);
  return vscode.Disposable.from(
    schema,
    vscode.workspace.registerFileSystemProvider(SCHEMA_SCHEME, schema, { isReadonly: true, isCaseSensitive: true }),
    vscode.commands.registerCommand('gatewayImages.editStyles', () => editStyles()),
    vscode.commands.registerCommand('gatewayImages.saveStarterStyle', (args?: unknown) =>
      starterStylesCode()
        .saveStarterStyle(services, args)
        .catch((error: unknown) => {
          void showError(services, error);
          if (args !== undefined) throw error;
          return undefined;
        }),
    ),
  );
}

function stylesUri(): vscode.Uri {
  const root = stylesRoot();
  if (root === undefined) throw new ValidationError('style', vscode.l10n.t('Open a folder first: its styles live in {0} inside it.', STYLES_FILE));
  return vscode.Uri.file(path.join(root, STYLES_FILE));
}

/** Opens the workspace's styles file, making it with an example style when there is none. Resolves its URI. */
export async function editStyles(): Promise<vscode.Uri> {
  const uri = stylesUri();
  const exists = await vscode.workspace.fs.stat(uri).then(
    () => true,
    () => false,
  );
  if (!exists) await vscode.workspace.fs.writeFile(uri, Buffer.from(stylesCode().withStyle(undefined, 'example', exampleStyle())));
  await vscode.window.showTextDocument(uri, { preview: false });
  return uri;
}

/**
 * Writes `definition` into the styles file under a name: `given` (by arguments), else one the person
 * gives ("Save as Style…"). A project style of that name is never replaced silently: the person is
 * asked, and a name given by arguments is refused. Undefined when cancelled.
 */
export async function saveStyle(definition: StyleDefinition, suggested = '', given?: string): Promise<string | undefined> {
  const uri = stylesUri();
  const current = await vscode.workspace.fs.readFile(uri).then(
    (bytes) => new TextDecoder().decode(bytes),
    () => undefined,
  );
  const code = stylesCode();
  const existing = current === undefined ? undefined : code.parseStyles(current, STYLES_FILE, path.dirname(path.dirname(uri.fsPath)), true);
  const taken = (name: string) => (existing ? code.styleNames(existing).includes(name) : false);
  const name = (
    given ??
    (await vscode.window.showInputBox({
      title: vscode.l10n.t('Save as Style'),
      prompt: vscode.l10n.t('A name for this style in {0}', STYLES_FILE),
      value: suggested,
      ignoreFocusOut: true,
      validateInput: (text) =>
        !(text.trim() && text.trim().length <= 64)
          ? vscode.l10n.t('A style name must be 1 to 64 characters without spaces around it')
          : taken(text.trim())
            ? {
                message: vscode.l10n.t('{0} already has a style "{1}": saving replaces it.', STYLES_FILE, text.trim()),
                severity: vscode.InputBoxValidationSeverity.Warning,
              }
            : undefined,
    }))
  )?.trim();
  if (name === undefined) return undefined;
  if (!name || name.length > 64) throw new ValidationError('name', vscode.l10n.t('A style name must be 1 to 64 characters without spaces around it'));
  if (taken(name)) {
    if (given !== undefined) {
      throw new ValidationError(
        'name',
        vscode.l10n.t('{0} already has a style "{1}"; it is not replaced. Give another name, or change the style in the file.', STYLES_FILE, name),
      );
    }
    const replace = vscode.l10n.t('Replace');
    const answer = await vscode.window.showWarningMessage(
      vscode.l10n.t('{0} already has a style "{1}". Replace it?', STYLES_FILE, name),
      { modal: true },
      replace,
    );
    if (answer !== replace) return undefined;
  }
  const text = code.withStyle(current, name, definition);
  await vscode.workspace.fs.writeFile(uri, Buffer.from(text));
  const open = vscode.l10n.t('Edit Styles');
  void vscode.window
    .showInformationMessage(messageText(vscode.l10n.t('Saved style "{0}" in {1}.', name, STYLES_FILE)), open)
    .then((choice) => (choice ? vscode.window.showTextDocument(uri, { preview: false }) : undefined));
  return name;
}

/** Serves the schema (a read-only file system of one file): VS Code's JSON support opens it like a document. */
class SchemaFileSystem implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly subscription: { dispose(): void };
  private mtime = Date.now();

  constructor(private readonly services: Services) {
    // New models become new suggestions.
    this.subscription = services.catalog.onDidChange(() => {
      this.mtime = Date.now();
      this.changed.fire([{ type: vscode.FileChangeType.Changed, uri: SCHEMA_URI }]);
    });
  }

  private content(): Uint8Array {
    return Buffer.from(JSON.stringify(stylesCode().stylesSchema(this.services.catalog.peek()), null, 2));
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    if (uri.path !== SCHEMA_URI.path) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: 0, mtime: this.mtime, size: this.content().byteLength };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    if (uri.path !== SCHEMA_URI.path) throw vscode.FileSystemError.FileNotFound(uri);
    return this.content();
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [['styles.schema.json', vscode.FileType.File]];
  }

  createDirectory(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  writeFile(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
