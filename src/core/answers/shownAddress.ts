// An image address as messages, logs and the Recover list show it: without its query and fragment,
// which often hold a signature that grants the image to whoever has the address (S3, GCS, CDNs), and
// without a user name or password. The full address stays only where Recover needs it: the kept
// answer and the recovery manifest on disk. Pure: no vscode import.

/** The part of a query-less address shown; longer ones end in "…". */
const MAX_SHOWN = 200;

/** `address` without its query ("?…" says there was one), fragment ("#…") and credentials. */
export function shownAddress(address: string): string {
  const text = address.trim();
  let shown: string;
  let hidden: string;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:')) {
    shown = `${url.origin}${url.pathname}`;
    hidden = url.search ? '?…' : url.hash ? '#…' : '';
  } else {
    // Not a web address (file:, a relative path, no URL at all): cut at the first ? or #, whatever follows.
    const cut = text.search(/[?#]/);
    shown = cut < 0 ? text : text.slice(0, cut);
    hidden = cut < 0 ? '' : `${text[cut]}…`;
    // A user name or password before a host (scheme://user:pass@host) is dropped too.
    shown = shown.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
  }
  if (shown.length > MAX_SHOWN) shown = `${shown.slice(0, MAX_SHOWN - 1)}…`;
  return `${shown}${hidden}`;
}
