// Bytes as base64, in chunks: String.fromCharCode(...bytes) of a mask's PNG of megabytes would
// overflow the call stack. Pure: btoa is the browser's (and Node's).

const CHUNK = 0x8000;

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}
