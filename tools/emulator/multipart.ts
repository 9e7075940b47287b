// A small multipart/form-data parser over a fully buffered body (linear: one indexOf per part).

export interface FormPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The boundary from a Content-Type header, or undefined when it is not multipart/form-data. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType.trim())) return undefined;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

/** Splits the body into parts; throws an Error with a readable message when malformed. */
export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const separator = Buffer.from(`\r\n--${boundary}`);
  const parts: FormPart[] = [];
  let pos = body.indexOf(delimiter);
  if (pos < 0) throw new Error('The multipart body has no boundary line.');
  for (;;) {
    pos += delimiter.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts; // closing "--boundary--"
    // Skip transport padding and the CRLF after the boundary line.
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (body[pos] === 0x0d && body[pos + 1] === 0x0a) pos += 2;
    else if (body[pos] === 0x0a) pos += 1;
    else throw new Error('Malformed multipart boundary line.');

    const headerEnd = body.indexOf('\r\n\r\n', pos);
    if (headerEnd < 0) throw new Error('A multipart part has no header terminator.');
    const headers = parseHeaders(body.toString('utf8', pos, headerEnd));
    const dataStart = headerEnd + 4;
    const next = body.indexOf(separator, dataStart);
    if (next < 0) throw new Error('The multipart body ends without a closing boundary.');
    const disposition = headers.get('content-disposition') ?? '';
    const name = dispositionParam(disposition, 'name');
    if (!/^form-data\b/i.test(disposition) || name === undefined) throw new Error('A multipart part has no form-data name.');
    parts.push({ name, filename: dispositionParam(disposition, 'filename'), contentType: headers.get('content-type'), data: body.subarray(dataStart, next) });
    pos = next + 2;
  }
}

function parseHeaders(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split(/\r\n/)) {
    const i = line.indexOf(':');
    if (i > 0) map.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return map;
}

function dispositionParam(disposition: string, param: string): string | undefined {
  const m = new RegExp(`;\\s*${param}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i').exec(disposition);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
}
