// Composition root: builds the services once and hands them to each feature's register().
import * as vscode from 'vscode';

export function activate(context: vscode.ExtensionContext): void {
  void context;
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
