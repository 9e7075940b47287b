// What the workbench page says: VS Code's codeAutomationLog calls formatted like console.log, the
// start-up chatter kept out of the output, and the page's errors, webview consoles, slow or failed
// webview requests and service worker messages, kept for a failed run's relayed.log.
import { format } from 'util';
import type { BrowserContext, Page, Request as BrowserRequest } from 'playwright-core';

/**
 * Formats one codeAutomationLog call. VS Code hands either a formatted string or console-style
 * arguments; `%c` CSS directives (and their style arguments) are dropped, the rest is
 * printf-formatted like console.log.
 */
export function formatAutomationLog(type: string, args: unknown): string {
  let parts = Array.isArray(args) ? [...args] : [args];
  if (typeof parts[0] === 'string' && parts[0].includes('%c')) {
    const template = parts[0];
    const styles = (template.match(/%c/g) ?? []).length;
    parts = [template.replace(/%c/g, ''), ...parts.slice(1 + styles)];
  }
  void type; // every level goes to the same stream; mocha's output is mostly 'info'
  if (parts.length > 0 && typeof parts[0] === 'string') return format(...(parts as [string, ...unknown[]]));
  return parts.map((p) => format('%O', p)).join(' ');
}

/** Workbench start-up chatter that comes through codeAutomationLog; kept in logLines, not printed. */
export const WORKBENCH_NOISE =
  /^(Resolving connection token|Resolved connection token|Creating a socket|Ignoring fetching additional builtin extensions|\[Service Worker\]|ChatSessionStore:|Updating additional builtin extensions cache)/;

/** Records the page's errors and crashes, and what its webviews and service worker say, into `logLines`. */
export function recordPageEvents(page: Page, context: BrowserContext, logLines: string[]): void {
  page.on('pageerror', (err) => logLines.push(`[page error] ${err.message}`));
  page.on('crash', () => logLines.push('[page crashed]'));
  // Webview frames and VS Code's webview service worker: a page that stays blank is explained here
  // (kept in relayed.log of a failed run, never printed).
  const stamp = () => new Date().toISOString().slice(11, 23);
  page.on('console', (message) => {
    if (/\/webview\//.test(message.location().url)) logLines.push(`[webview ${stamp()}] ${message.type()}: ${message.text()}`);
  });
  const webviewRequest = (url: string) => /vscode-resource|vscode-cdn|\/webview\/browser\/pre\//.test(url);
  const requestStarted = new WeakMap<object, number>();
  context.on('request', (request) => {
    if (!webviewRequest(request.url())) return;
    requestStarted.set(request, Date.now());
    logLines.push(`[webview request ${stamp()}] ${request.method()} ${request.url().slice(0, 200)}`);
  });
  const requestEnded = (outcome: string) => (request: BrowserRequest) => {
    const started = requestStarted.get(request);
    if (started === undefined) return;
    const ms = Date.now() - started;
    // Only the slow and the failed: a webview that waits on a resource shows here.
    if (ms >= 1000 || outcome !== 'finished')
      logLines.push(`[webview request ${stamp()}] ${outcome} after ${ms} ms: ${request.method()} ${request.url().slice(0, 200)}`);
  };
  context.on('requestfinished', requestEnded('finished'));
  context.on('requestfailed', (request) => requestEnded(`failed (${request.failure()?.errorText ?? '?'})`)(request));
  context.on('serviceworker', (worker) => {
    logLines.push(`[service worker ${stamp()}] started: ${worker.url().replace(/\?.*/, '')}`);
    worker.on('console', (message) => logLines.push(`[service worker ${stamp()}] ${message.type()}: ${message.text()}`));
  });
}
