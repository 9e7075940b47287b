// How a generation response that is not the JSON it should be is told: where (top level, `data`,
// data[i]), what was expected and what was found, at which byte of the body. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { ResponseFormatError } from '../gateway/errors';
import { Frame } from './generationFields';
import { describeByte } from './jsonScanner';

/** The first byte of the body is no JSON value. */
export function notJsonError(c: number, at: number): ResponseFormatError {
  return new ResponseFormatError(l10n.t("The gateway's response is not JSON: it starts with {0} (at byte {1}).", describeByte(c), at));
}

/** Byte c at `at` is not what the syntax allows there; `frame`: the innermost open object or array. */
export function syntaxError(frame: Frame | undefined, elementIndex: number, c: number, at: number, expected: string): ResponseFormatError {
  const found = describeByte(c);
  return new ResponseFormatError(
    frame === Frame.Element
      ? l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2} in data[{3}].", expected, found, at, elementIndex)
      : frame === Frame.Data
        ? l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2} in `data`.", expected, found, at)
        : l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2}.", expected, found, at),
  );
}

/** The body ended before its JSON did (`length` bytes); `inImage`: inside data[elementIndex]'s image string. */
export function endedEarlyError(length: number, inImage: boolean, elementIndex: number): ResponseFormatError {
  if (length === 0) return new ResponseFormatError(l10n.t("The gateway's response body is empty (expected a JSON object)."));
  return new ResponseFormatError(
    inImage
      ? l10n.t("The gateway's response ended early: the JSON is truncated after {0} bytes inside data[{1}].b64_json.", length, elementIndex)
      : l10n.t("The gateway's response ended early: the JSON is truncated after {0} bytes.", length),
  );
}

/** Something follows the top-level object. */
export function trailingDataError(c: number, at: number): ResponseFormatError {
  return new ResponseFormatError(l10n.t("The gateway's response has unexpected data after the JSON object ({0} at byte {1}).", describeByte(c), at));
}
