// The quality of a region edit saved as JPEG (issue 41): its own module, so that the confirmation (in
// dist/extension.js) can name it without bundling the encoder (jpegEncode.ts, in dist/regionEdit.js).
export const JPEG_QUALITY = 90;
