// The meaning of a generation response's fields (data[i].b64_json, url, media_type, model, created,
// usage) and what is kept of them. The JSON syntax around them is generationParser.ts's.
// Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { describeJsonType } from './jsonScanner';
import type { GeneratedImageMeta, GenerationResponseMeta, Usage } from '../gateway/types';
import { ResponseFormatError } from '../gateway/errors';

/** What the value being read means. */
export const enum Meaning {
  Skip,
  Top,
  Data,
  Element,
  Base64,
  /** data[i].url: an image when it holds a data URL, else the image's address (the previous API version's form). */
  Url,
  MediaType,
  Model,
  Created,
  Usage,
  Cost,
  Balance,
}

/** The containers the parser is inside. */
export const enum Frame {
  Top,
  Data,
  Element,
  Usage,
  SkippedObject,
  SkippedArray,
}

/** Collects the fields the parser reads; every position is a byte offset in the whole body. */
export class GenerationFields {
  /** Index of the current (or last) element of `data`. */
  elementIndex = -1;
  private dataSeen = false;
  private elementCount = 0;
  /** Which field of the element held its image, once one did. */
  private elementImageFrom: 'b64_json' | 'url' | undefined;
  /** A url that held an address, not a data URL: the image is there (downloaded by the client). */
  private elementUrl: string | undefined;
  private elementMediaType: string | undefined;
  /** The media type of a data URL the image came in (a hint, after media_type). */
  private elementDataUrlType: string | undefined;
  private usageCost: number | undefined;
  private usageBalance: number | undefined;
  readonly meta: GenerationResponseMeta = { images: [] };

  /** The frame an object with this meaning opens. */
  openObject(meaning: Meaning, at: number): Frame {
    if (meaning === Meaning.Top) return Frame.Top;
    if (meaning === Meaning.Element) {
      this.elementIndex = this.elementCount++;
      this.elementImageFrom = undefined;
      this.elementUrl = undefined;
      this.elementMediaType = undefined;
      this.elementDataUrlType = undefined;
      return Frame.Element;
    }
    if (meaning === Meaning.Usage) {
      this.usageCost = undefined;
      this.usageBalance = undefined;
      return Frame.Usage;
    }
    this.requireType(meaning, 'an object', at);
    return Frame.SkippedObject;
  }

  /** The frame an array with this meaning opens. */
  openArray(meaning: Meaning, at: number): Frame {
    if (meaning === Meaning.Data) {
      this.dataSeen = true;
      return Frame.Data;
    }
    this.requireType(meaning, 'an array', at);
    return Frame.SkippedArray;
  }

  /** The image of the current element starts (in b64_json, or a data URL in url): returns its index. */
  openImage(from: 'b64_json' | 'url'): number {
    this.elementImageFrom = from;
    return this.elementIndex;
  }

  /** The image string ended and decoded; `dataUrlType`: the media type of its data URL header. */
  imageEnded(dataUrlType: string | undefined): void {
    this.elementDataUrlType = dataUrlType;
  }

  closeObject(frame: Frame | undefined, at: number): void {
    if (frame === Frame.Element) {
      const index = this.elementIndex;
      const url = this.elementImageFrom ? undefined : this.elementUrl?.trim();
      if (!this.elementImageFrom && !url)
        throw new ResponseFormatError(l10n.t("data[{0}] of the gateway's response has no b64_json (at byte {1}).", index, at));
      // An address without the bytes: the image is downloaded from there once the answer is read.
      const image: GeneratedImageMeta = url ? { index, url } : { index };
      const mediaType = this.elementMediaType ?? this.elementDataUrlType;
      if (mediaType !== undefined) image.mediaType = mediaType;
      this.meta.images.push(image);
    } else if (frame === Frame.Usage) {
      // Either figure alone is still worth keeping (the balance updates the account, the cost the history).
      if (this.usageCost !== undefined || this.usageBalance !== undefined) {
        const usage: Usage = {};
        if (this.usageCost !== undefined) usage.cost_rub = this.usageCost;
        if (this.usageBalance !== undefined) usage.balance = this.usageBalance;
        this.meta.usage = usage;
      }
    } else if (frame === Frame.Top) {
      if (!this.dataSeen) throw new ResponseFormatError(l10n.t("The gateway's response has no `data` array."));
    }
  }

  /** The meaning of the value after `key` inside `frame`. */
  meaningOfKey(frame: Frame, key: string): Meaning {
    if (frame === Frame.Top) {
      if (key === 'data') {
        if (this.dataSeen) throw new ResponseFormatError(l10n.t("The gateway's response has `data` twice."));
        return Meaning.Data;
      }
      if (key === 'usage') return Meaning.Usage;
      if (key === 'created') return Meaning.Created;
      if (key === 'model') return Meaning.Model;
    } else if (frame === Frame.Element) {
      if (key === 'b64_json') {
        if (this.elementImageFrom === 'b64_json')
          throw new ResponseFormatError(l10n.t("data[{0}] of the gateway's response has b64_json twice.", this.elementIndex));
        // The same image again as a data URL in `url` came first: decoded once.
        return this.elementImageFrom ? Meaning.Skip : Meaning.Base64;
      }
      if (key === 'media_type') return Meaning.MediaType;
      if (key === 'url') return this.elementImageFrom ? Meaning.Skip : Meaning.Url;
    } else if (frame === Frame.Usage) {
      if (key === 'cost_rub') return Meaning.Cost;
      if (key === 'balance') return Meaning.Balance;
    }
    return Meaning.Skip;
  }

  string(meaning: Meaning, value: string): void {
    if (meaning === Meaning.Model) this.meta.model = value;
    else if (meaning === Meaning.MediaType) this.elementMediaType = value;
    else if (meaning === Meaning.Url) this.elementUrl = value;
    // Amounts as numeric strings ("12.50"), as some gateways send money; anything else is ignored.
    else if (meaning === Meaning.Cost) this.usageCost = numericString(value);
    else if (meaning === Meaning.Balance) this.usageBalance = numericString(value);
  }

  /** A kept string was longer than the capture limit: an amount is ignored, a name is an error. */
  stringTooLong(meaning: Meaning, at: number): void {
    if (meaning === Meaning.Cost || meaning === Meaning.Balance) return;
    const name = meaning === Meaning.Model ? '`model`' : `data[${this.elementIndex}].${meaning === Meaning.Url ? 'url' : 'media_type'}`;
    throw new ResponseFormatError(l10n.t("{0} in the gateway's response is too long (near byte {1}).", name, at));
  }

  number(meaning: Meaning, value: number): void {
    if (meaning === Meaning.Created) this.meta.created = value;
    else if (meaning === Meaning.Cost) this.usageCost = value;
    else if (meaning === Meaning.Balance) this.usageBalance = value;
  }

  /** Values whose type is required: the top level, `data`, its elements and b64_json. */
  requireType(meaning: Meaning, found: string, at: number): void {
    switch (meaning) {
      case Meaning.Top:
        throw new ResponseFormatError(
          found === 'an array'
            ? l10n.t("The gateway's response is a JSON array, not the expected object.")
            : l10n.t("The gateway's response is {0}, not the expected JSON object.", describeJsonType(found)),
        );
      case Meaning.Data:
        throw new ResponseFormatError(l10n.t("`data` in the gateway's response is {0}, not an array (at byte {1}).", describeJsonType(found), at));
      case Meaning.Element:
        throw new ResponseFormatError(l10n.t("data[{0}] in the gateway's response is {1}, not an object.", this.elementCount, describeJsonType(found)));
      case Meaning.Base64:
        throw new ResponseFormatError(l10n.t("data[{0}].b64_json in the gateway's response is {1}, not a string.", this.elementIndex, describeJsonType(found)));
      default:
      // Any other field of an unexpected type is ignored (skipped like an unknown one).
    }
  }

  /** Where a syntax error is, for its message: " in data[2]", " in `data`" or nothing. */
}

/** Whether a string with this meaning is kept (its characters captured). */
export function isKeptString(meaning: Meaning): boolean {
  return meaning === Meaning.Model || meaning === Meaning.MediaType || meaning === Meaning.Cost || meaning === Meaning.Balance;
}

/** "12.5", " 12,50 " (a decimal comma) → a finite number; anything else → undefined. */
function numericString(text: string): number | undefined {
  const trimmed = text.trim().replace(/^(-?\d+),(\d+)$/, '$1.$2');
  if (!/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : undefined;
}
