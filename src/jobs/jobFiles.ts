// The file side of a job: reference files checked before anything is reserved, file system errors
// in words, and the sink that reports each image as it arrives. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ValidationError } from '../core/gateway/errors';
import type { ImageSink } from '../core/gateway/imageSink';
import * as l10n from '@vscode/l10n';
import { EDITABLE_MEDIA_TYPES, readImageHead, sniffImage } from '../core/images/imageSniff';
import type { StagedImage, StagingSink } from '../core/files/imageStore';
import type { ReferenceFile } from '../core/requests/requestBodies';
import type { JobEvent } from './jobTypes';

export const MAX_REFERENCE_BYTES = 25 * 1024 * 1024;

/** Reference files are checked before anything is reserved: readable, an image by its bytes, at most 25 MB. */
export async function checkReferenceFiles(paths: string[]): Promise<ReferenceFile[]> {
  const files: ReferenceFile[] = [];
  for (const file of paths) {
    const name = path.basename(file);
    let size: number;
    try {
      const stat = await fs.stat(file);
      if (!stat.isFile()) throw new Error('not a file');
      size = stat.size;
    } catch {
      throw new ValidationError('images', l10n.t('Cannot read "{0}": the file does not exist or is not readable.', name));
    }
    if (size > MAX_REFERENCE_BYTES) {
      const mb = (bytes: number) => l10n.t('{0} MB', (bytes / 1024 / 1024).toFixed(1));
      throw new ValidationError('images', l10n.t('"{0}" is {1}; the gateway accepts reference images of at most 25 MB.', name, mb(size)));
    }
    let head: Buffer;
    try {
      head = await readImageHead(file);
    } catch {
      throw new ValidationError('images', l10n.t('Cannot read "{0}".', name));
    }
    const kind = sniffImage(head);
    if (!kind || !EDITABLE_MEDIA_TYPES.includes(kind.mediaType)) {
      throw new ValidationError('images', l10n.t('"{0}" is not a PNG, JPEG or WebP image (checked by its content, not its extension).', name), [
        'png',
        'jpeg',
        'webp',
      ]);
    }
    files.push({ path: file, mediaType: kind.mediaType, size });
  }
  return files;
}

export function describeFsError(error: unknown, dir: string): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  const reasons: Record<string, () => string> = {
    EACCES: () => l10n.t('the folder is not writable'),
    EPERM: () => l10n.t('the folder is not writable'),
    EROFS: () => l10n.t('the folder is on a read-only file system'),
    ENOSPC: () => l10n.t('the disk is full'),
    ENOTDIR: () => l10n.t('a file stands where the folder should be'),
  };
  const reason = code && Object.hasOwn(reasons, code) && reasons[code] ? reasons[code]() : error instanceof Error ? error.message : String(error);
  return l10n.t('could not save into {0}: {1}', dir, reason);
}

/** Forwards to the staging sink (images, and a place for what cannot be decoded) and reports each completed image. */
export class ReportingSink implements ImageSink {
  constructor(
    readonly staging: StagingSink,
    private readonly onEvent?: (event: JobEvent) => void,
    /** Called once per complete image; must not block the stream (placement runs beside it). */
    private readonly onComplete?: (image: StagedImage) => void,
  ) {}

  async open(index: number) {
    const writer = await this.staging.open(index);
    let bytes = 0;
    return {
      write: (chunk: Buffer) => {
        bytes += chunk.length;
        return writer.write(chunk);
      },
      close: async () => {
        await writer.close();
        this.onEvent?.({ type: 'image-received', index, bytes });
        const image = this.staging.images.find((i) => i.index === index);
        if (image) this.onComplete?.(image);
      },
      abort: (reason: Error) => writer.abort(reason),
      received: () => writer.received(),
    };
  }

  createFile(name: string) {
    return this.staging.createFile(name);
  }
}
