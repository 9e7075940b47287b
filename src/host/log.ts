// The "Gateway Images" log. Requests are logged with method, path, status, duration and request
// id. The key and the Authorization header are never passed here.
import * as vscode from 'vscode';
import type { RequestLogEntry } from '../core/client/client';

export function createLog(): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel('Gateway Images', { log: true });
}

export function logRequest(log: vscode.LogOutputChannel, entry: RequestLogEntry): void {
  const parts = [
    entry.method,
    entry.path,
    entry.status === undefined ? '-' : String(entry.status),
    `${entry.durationMs} ms`,
    entry.requestId ? `request-id=${entry.requestId}` : undefined,
    entry.attempt > 1 ? `attempt ${entry.attempt}` : undefined,
    entry.error ? `error=${entry.error}` : undefined,
  ].filter(Boolean);
  const line = parts.join(' ');
  if (entry.error) log.warn(line);
  else log.info(line);
}
