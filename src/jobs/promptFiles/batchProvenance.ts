// The second source of a batch resume: PNGs in the output folder that the results journal does not
// know (a journal cleared or lost, a crash between saving and recording, images moved in by
// Recover) whose provenance chunk names a line of this prompt file. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { type BatchLine } from '../../core/requests/batchFile';
import { isRecord } from '../../core/common/json';
import { readPngTextChunk } from '../../core/files/pngText';
import { runBounded } from '../pool';
import { PROVENANCE_KEYWORD } from '../provenance';

const READ_AT_ONCE = 8;

/** The files now in `dir`, as full paths (none when it does not exist yet). */
export async function filesIn(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

/**
 * Whether a file exists: a file right in `dir` is looked up in its listing (one read of the
 * folder instead of a question to the disk per line); any other is asked of the disk.
 */
export function existsWith(dir: string, listing: readonly string[], exists: (file: string) => boolean): (file: string) => boolean {
  const present = new Set(listing);
  return (file) => present.has(file) || (path.dirname(file) !== dir && exists(file));
}

/** Line number → the PNGs of `listing` made for that line (same prompt file name, line and request key). */
export async function findLinesByProvenance(
  listing: readonly string[],
  promptFile: string,
  lines: readonly BatchLine[],
  known: (file: string) => boolean,
): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  if (!lines.length) return found;
  const wanted = new Map(lines.map((l) => [`${l.line}\0${l.key}`, l.line]));
  const name = path.basename(promptFile);
  const candidates = listing.filter((file) => file.toLowerCase().endsWith('.png') && !known(file));
  await runBounded(candidates, READ_AT_ONCE, async (file) => {
    const batch = await batchOf(file);
    const line = batch && batch.file === name ? wanted.get(`${batch.line}\0${batch.key}`) : undefined;
    if (line !== undefined) found.set(line, [...(found.get(line) ?? []), file].sort());
  });
  return found;
}

async function batchOf(file: string): Promise<{ file: string; line: number; key: string } | undefined> {
  try {
    const text = await readPngTextChunk(file, PROVENANCE_KEYWORD);
    const batch: unknown = text === undefined ? undefined : (JSON.parse(text) as { batch?: unknown }).batch;
    if (isRecord(batch) && typeof batch.file === 'string' && typeof batch.line === 'number' && typeof batch.key === 'string')
      return { file: batch.file, line: batch.line, key: batch.key };
  } catch {
    // not a readable PNG, or no provenance: not one of ours
  }
  return undefined;
}
