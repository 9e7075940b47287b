// Files a test finds in the workspace.
import * as fs from 'fs';

/** The images in a folder (PNG, JPEG, WebP), sorted; none when it does not exist. */
export function imagesIn(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((n) => /\.(png|jpe?g|webp)$/i.test(n))
        .sort()
    : [];
}
