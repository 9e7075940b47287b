// Where a workspace keeps its styles. Apart from styleFile.ts, so that the code loaded at
// activation can name the file without bringing in its reader (and jsonc-parser with it).

/** Where a workspace keeps its styles, relative to the workspace folder. */
export const STYLES_FILE = '.gateway-images/styles.json';
