// Types of jpeg-js's encoder module alone (the package's own types declare its index, which pulls the decoder in too).
declare module 'jpeg-js/lib/encoder' {
  /** Baseline JPEG, 4:4:4, of RGBA pixels (alpha ignored); `quality` 1–100. */
  function encode(image: { width: number; height: number; data: Uint8Array }, quality?: number): { data: Buffer; width: number; height: number };
  export = encode;
}
