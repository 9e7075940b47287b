// References from outside the form: files dropped from the Explorer (text/uri-list; VS Code hands
// Explorer drags to webviews while Shift is held), image files dropped from the OS, and pasted
// images. Pasted/dropped bytes go to the host once, as base64, in one pasteImage message.
import { LIMITS, PASTE_MEDIA_TYPES, type PasteMediaType } from '../../src/studio/protocol/protocol';
import { request, t } from './host';

const MAX_BYTES = 25 * 1024 * 1024;

export function attachReferenceInputs(root: HTMLElement, onError: (message: string) => void): void {
  const zone = () => root.querySelector('.reference-zone');
  document.addEventListener('dragover', (event) => {
    if (!event.dataTransfer) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    zone()?.classList.add('drag-over');
  });
  document.addEventListener('dragleave', (event) => {
    if (event.target === document.documentElement || !event.relatedTarget) zone()?.classList.remove('drag-over');
  });
  document.addEventListener('drop', (event) => {
    zone()?.classList.remove('drag-over');
    const data = event.dataTransfer;
    if (!data) return;
    event.preventDefault();
    const uris = droppedUris(data);
    if (uris.length) {
      request({ type: 'dropUris', uris: uris.slice(0, LIMITS.droppedUris) });
      return;
    }
    for (const file of Array.from(data.files)) void sendImage(file, onError);
  });
  document.addEventListener('paste', (event) => {
    const items = Array.from(event.clipboardData?.items ?? []);
    const file = items.find((i) => i.kind === 'file' && i.type.startsWith('image/'))?.getAsFile();
    if (!file) return; // plain text pastes into the prompt as usual
    event.preventDefault();
    void sendImage(file, onError);
  });
}

/** URIs of a drop: text/uri-list (RFC 2483: one per line, # for comments) or VS Code's own list. */
function droppedUris(data: DataTransfer): string[] {
  const text = data.getData('text/uri-list') || data.getData('application/vnd.code.uri-list');
  let lines = text.split(/\r?\n/);
  if (text.trim().startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) lines = parsed.filter((v): v is string => typeof v === 'string');
    } catch {
      // not JSON: use the lines
    }
  }
  return lines.map((l) => l.trim()).filter((l) => l && !l.startsWith('#') && l.length <= LIMITS.path);
}

async function sendImage(file: File, onError: (message: string) => void): Promise<void> {
  if (!PASTE_MEDIA_TYPES.includes(file.type as PasteMediaType)) return onError(t('pasteUnsupported'));
  if (file.size > MAX_BYTES) return onError(t('pasteTooLarge'));
  const base64 = await readBase64(file);
  request({ type: 'pasteImage', mediaType: file.type as PasteMediaType, base64 });
}

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      // readAsDataURL gives a string "data:<type>;base64,<data>".
      const url = typeof reader.result === 'string' ? reader.result : '';
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read.'));
    reader.readAsDataURL(file);
  });
}
