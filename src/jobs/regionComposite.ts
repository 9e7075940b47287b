// The composite of a region edit (issue 41), shared by the edit (regionEdit.ts finishRegionEdit) and the
// start that finishes an interrupted one (regionRecovery.ts): the answer pasted into the original through
// the feathered mask and written whole (replaced atomically, or linked under a new name), marked by its
// own PNG chunk (a JPEG result: its own COM segment), under the result's lease confirmed right before it
// lands; the mask saved beside it. No vscode import.
import { createHash, randomUUID } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decodeImage, encodePngParts } from '../core/images/codecs';
import { withRegionComposited } from '../core/images/composite';
import { encodeJpeg, jpegComments } from '../core/images/jpegEncode';
import type { RgbaImage } from '../core/images/pixels';
import type { RegionMask } from '../core/images/regionMask';
import { resizeRgba } from '../core/images/resize';
import { type Lease, takeLease } from '../core/files/lease';
import { buildITXtChunk, readPngTextChunk } from '../core/files/pngText';
import { replaceFile, syncFolder } from '../core/files/replaceFile';
import { isWholeImage } from '../core/files/wholeImage';
import { PROVENANCE_KEYWORD } from './provenance';
import { compositeNameOf } from './regionPending';
import type { RegionRecord } from './results/resultTypes';

/** An iTXt chunk of every composite (a COM segment of a JPEG one): the fact that tells a composite from an answer not yet pasted (regionRecovery.ts). */
export const COMPOSITE_KEYWORD = 'gateway-images-composite';
/** The folder of the per-result leases (one machine's windows and MCP servers share it). */
export const REGION_LOCK_DIR = path.join(os.tmpdir(), 'gateway-images-region-locks');

/** Everything decided before anything is reserved: the decoded original, the feathered mask, the crop and what it sends. */
export interface RegionPlan {
  record: RegionRecord;
  /** The mask is the studio's own file (it goes): the record names the copy kept beside each result. */
  maskKeptBeside?: boolean;
  original: RgbaImage;
  /** The original's ICC colour profile: the result carries it, so its colours match the original's. */
  iccProfile?: Uint8Array;
  /** The mask with its feather: what the answer is pasted through. */
  mask: RegionMask;
  /** The crop of the original that is sent, as a PNG. */
  cropPng: Buffer;
  /** "region 412×300 of 2048×1536, sent as 3:2": for the confirmation and the answers. */
  description: string;
}

/**
 * `use` under the lease of `file`'s composite (wait 'no': rejects with ELOCKED when another holds it).
 * A lease that cannot be had for another reason (the temporary folder not writable) does not stop a live edit.
 */
export async function underResultLease<T>(
  file: string,
  wait: 'no' | 'briefly',
  use: (lease?: Lease) => Promise<T>,
  lockDir = REGION_LOCK_DIR,
  staleMs?: number,
): Promise<T> {
  const key = createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 32);
  let lease: Lease | undefined;
  try {
    await fs.mkdir(lockDir, { recursive: true });
    lease = await takeLease(path.join(lockDir, key), { lockPath: path.join(lockDir, `${key}.lock`), wait, ...(staleMs !== undefined && { staleMs }) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED' || wait === 'no') throw error;
  }
  try {
    return await use(lease);
  } finally {
    await lease?.release().catch(() => undefined);
  }
}

/** A whole PNG carrying the composite's chunk, or a whole JPEG with its COM segment: pasted already, never to be pasted again. */
export async function isCompositeFile(file: string): Promise<boolean> {
  const marked = (await readPngTextChunk(file, COMPOSITE_KEYWORD).catch(() => undefined)) !== undefined || (await isMarkedJpeg(file));
  return marked && (await isWholeImage(file));
}

/** The COM segment comes right after the JFIF header (jpegEncode.ts): the first bytes hold it. */
async function isMarkedJpeg(file: string): Promise<boolean> {
  try {
    const handle = await fs.open(file, 'r');
    try {
      const head = Buffer.alloc(4096);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      return jpegComments(head.subarray(0, bytesRead)).includes(COMPOSITE_KEYWORD);
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

/**
 * Pastes the answer in `file` into the original; `lease` (the result's) is confirmed right before the
 * composite lands. `beforeFence` runs just before that confirmation (tests stop the process there).
 */
export async function compositeInto(plan: RegionPlan, file: string, lease?: Lease, beforeFence?: () => Promise<void>): Promise<string> {
  const sized = await answerAtCropSize(file, plan.record.crop);
  const jpeg = plan.record.format === 'jpeg';
  // The composite's name: the answer's own when it has the result's format, else one beside it (writeNew's first choice).
  const target = compositeNameOf(file, plan.record.format);
  const icc = plan.iccProfile && { iccProfile: plan.iccProfile };
  // A JPEG has no text chunks: its provenance stays out (the journal names it all); its mark is a COM segment.
  let provenance = jpeg ? undefined : await readPngTextChunk(file, PROVENANCE_KEYWORD).catch(() => undefined);
  if (provenance !== undefined && plan.maskKeptBeside) provenance = withMaskBeside(provenance, target);
  const chunks = [...(provenance !== undefined ? [buildITXtChunk(PROVENANCE_KEYWORD, provenance)] : []), buildITXtChunk(COMPOSITE_KEYWORD, 'region')];
  // Pasted into the decoded original itself (put back right after encoding): no 64 MB copy of it.
  const parts = withRegionComposited(plan.original, sized, plan.record.crop, plan.mask, (image) =>
    jpeg ? [encodeJpeg(image, { ...icc, comments: [COMPOSITE_KEYWORD] })] : encodePngParts(image, { ...icc, chunks }),
  );
  // The fence: the answer was read under this lease; a holder that stops past here writes the same bytes (see regionRecovery.ts).
  const beforeRename =
    lease &&
    (async () => {
      await beforeFence?.();
      await lease.confirm();
    });
  if (target === file) {
    await replaceFile(file, (handle) => writeParts(handle, parts), { durable: true, ...(beforeRename && { beforeRename }) });
    return file;
  }
  await beforeRename?.();
  const written = await writeNew(target.slice(0, -path.extname(target).length), path.extname(target), parts);
  // Saved as JPEG: the answer (a PNG or WebP) goes once the composite is whole on disk, one result file as when it is
  // replaced in place. A PNG result keeps a JPEG or WebP answer beside it (as before the choice).
  if (jpeg && written === target) await fs.rm(file, { force: true });
  return written;
}

/** The provenance with its region's mask named as the copy saveMaskBeside keeps beside `result` (relative, as provenance names files). */
function withMaskBeside(provenance: string, result: string): string {
  try {
    const parsed = JSON.parse(provenance) as { region?: { mask?: string } };
    if (!parsed.region) return provenance;
    parsed.region.mask = `${path.basename(result, path.extname(result))}.mask.png`;
    return JSON.stringify(parsed);
  } catch {
    return provenance;
  }
}

/** The answer decoded and resized to the crop: its own pixels are garbage once this returns. */
async function answerAtCropSize(file: string, crop: { width: number; height: number }): Promise<RgbaImage> {
  const answer = await decodeImage(await fs.readFile(file));
  return answer.width === crop.width && answer.height === crop.height ? answer : resizeRgba(answer, crop.width, crop.height);
}

/** The PNG's parts one after the other (a write may take fewer bytes than given: the rest follows). */
async function writeParts(handle: fs.FileHandle, parts: readonly Uint8Array[]): Promise<void> {
  for (const part of parts) for (let at = 0; at < part.length;) at += (await handle.write(part, at, part.length - at)).bytesWritten;
}

/** `<result without extension>.mask.png`, never over another file (the same bytes there already: that one). */
export async function saveMaskBeside(result: string, maskFile: string): Promise<string> {
  const base = result.slice(0, result.length - path.extname(result).length);
  return writeNew(`${base}.mask`, '.png', await fs.readFile(maskFile));
}

/**
 * A new file `<base>[-n]<ext>`, whole or not at all: written and synced under a temporary name, then
 * linked to its name (a link never replaces). A file of the same bytes at a name is taken as this one
 * (a composite or mask written twice, by a holder that stopped past its fence, is one file).
 */
async function writeNew(base: string, ext: string, data: Uint8Array | readonly Uint8Array[]): Promise<string> {
  const parts = data instanceof Uint8Array ? [data] : data;
  const temporary = `${path.join(path.dirname(base), `.${path.basename(base)}`)}.${randomUUID().slice(0, 8)}.tmp`;
  const handle = await fs.open(temporary, 'wx');
  try {
    try {
      await writeParts(handle, parts);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    for (let attempt = 0; attempt < 100; attempt++) {
      const file = `${base}${attempt ? `-${attempt + 1}` : ''}${ext}`;
      try {
        await fs.link(temporary, file).catch((error: NodeJS.ErrnoException) => {
          // A file system without hard links (FAT, some shares): a copy that never replaces, as before.
          if (error.code === 'EEXIST' || !NO_LINKS.has(error.code ?? '')) throw error;
          return fs.copyFile(temporary, file, fsConstants.COPYFILE_EXCL);
        });
        await syncFolder(path.dirname(file)).catch(() => undefined);
        return file;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (await sameBytes(file, parts)) return file;
      }
    }
    throw new Error(`${base}${ext}: every name is taken`);
  } finally {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
  }
}

const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

async function sameBytes(file: string, parts: readonly Uint8Array[]): Promise<boolean> {
  const size = parts.reduce((n, p) => n + p.length, 0);
  const stat = await fs.stat(file).catch(() => undefined);
  if (stat?.size !== size) return false;
  return Buffer.concat(parts).equals(await fs.readFile(file));
}
