// File names for saved images. Pure: no vscode import.
// Names come from prompts, model ids and user patterns (possibly from an untrusted
// workspace), so every result is a single safe path segment on Windows, macOS and Linux.

const CYRILLIC: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  д: 'd',
  е: 'e',
  ё: 'yo',
  ж: 'zh',
  з: 'z',
  и: 'i',
  й: 'y',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
  // Ukrainian and Belarusian letters
  є: 'ye',
  і: 'i',
  ї: 'yi',
  ґ: 'g',
  ў: 'u',
};

// Latin letters that Unicode normalisation does not reduce to ASCII.
const LATIN_EXTRA: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th' };

/** Lower-case ASCII words of `text` joined by '-', at most `maxLength` characters; 'image' when nothing is left. */
export function slugify(text: string, maxLength = 40): string {
  const limit = Math.max(1, Math.floor(maxLength));
  const latin = Array.from(String(text).toLowerCase(), (c) => CYRILLIC[c] ?? LATIN_EXTRA[c] ?? c).join('');
  const slug = latin
    .normalize('NFKD')
    .replace(/\p{M}/gu, '') // accents: é → e
    .replace(/['’]/g, '') // don't → dont, not don-t
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug === '') return 'image'.slice(0, limit);
  if (slug.length <= limit) return slug;
  // Cut at a word boundary when one exists in the kept part.
  let cut = slug.slice(0, limit);
  if (slug[limit] !== '-' && cut.includes('-')) cut = cut.slice(0, cut.lastIndexOf('-'));
  return cut.replace(/-+$/, '');
}

const RESERVED = /^(con|prn|aux|nul|conin\$|conout\$|com[1-9¹²³]|lpt[1-9¹²³])$/i;
// Many file systems limit a name to 255 bytes; keep room for "-NN.webp".
const MAX_NAME_BYTES = 240;

/**
 * Removes what could escape a folder or break a file system: separators, control and
 * bidi-override characters, Windows-forbidden characters, '..'; returns '' when nothing is left.
 */
function cleanSegment(value: string): string {
  return (
    String(value)
      // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed here.
      .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
      .replace(/[/\\<>:"|?*]/g, '-')
      .replace(/\.{2,}/g, '.')
  );
}

function isReserved(name: string): boolean {
  // Windows reserves the device names whatever the extension: "con.txt", "Nul .tar.gz".
  const stem = (name.split('.', 1)[0] ?? '').trimEnd();
  return RESERVED.test(stem);
}

function trimEnds(name: string): string {
  // Leading dots would hide the file; trailing dots and spaces are dropped by Windows.
  return name.replace(/^[\s.]+/, '').replace(/[\s.]+$/, '');
}

function truncate(name: string, maxChars: number): string {
  const chars = Array.from(name).slice(0, maxChars); // never split a surrogate pair
  while (chars.length > 0 && Buffer.byteLength(chars.join('')) > MAX_NAME_BYTES) chars.pop();
  return chars.join('');
}

/** A single safe, non-empty file name of at most `maxLength` characters. */
export function sanitizeFileName(name: string, maxLength = 120): string {
  const limit = Math.max(1, Math.floor(maxLength));
  let result = trimEnds(cleanSegment(name));
  if (result === '') result = 'image';
  if (isReserved(result)) {
    const stem = result.split('.', 1)[0] ?? '';
    result = stem.trimEnd() + '_' + result.slice(stem.length); // "con.txt" → "con_.txt"
  }
  result = trimEnds(truncate(result, limit));
  if (result === '') result = 'image'.slice(0, limit);
  // Only reachable with a tiny limit that cut a longer name down to a device name.
  if (isReserved(result)) result = result.slice(0, -1) + '_';
  return result;
}

export interface NameFields {
  date: Date;
  prompt: string;
  model: string;
  /** 1-based. */
  index: number;
  seed?: number;
  /** Edits: base name of the first source without extension. */
  sourceName?: string;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function placeholderValue(key: string, fields: NameFields): string | undefined {
  const d = fields.date;
  const validDate = d instanceof Date && !Number.isNaN(d.getTime());
  switch (key) {
    case 'date':
      return validDate ? `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` : '';
    case 'time':
      return validDate ? `${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}` : '';
    case 'slug':
      return slugify(fields.prompt ?? '');
    case 'model':
      return fields.model ?? '';
    case 'index':
      return String(fields.index);
    case 'seed':
      return fields.seed === undefined || fields.seed === null ? '' : String(fields.seed);
    case 'name':
      return fields.sourceName ?? '';
    default:
      return undefined;
  }
}

const JOINER = /[-_. ]/;

/**
 * Expands {date} {time} {slug} {model} {index} {seed} {name}. Unknown placeholders stay as
 * literal text. An empty value also drops one joiner next to it, so "{slug}-{seed}" has no dangling '-'.
 */
export function expandFileNamePattern(pattern: string, fields: NameFields): string {
  const source = String(pattern);
  const re = /\{([A-Za-z]+)\}/g;
  let out = '';
  let last = 0;
  for (let m = re.exec(source); m !== null; m = re.exec(source)) {
    out += cleanSegment(source.slice(last, m.index));
    last = m.index + m[0].length;
    const raw = placeholderValue(m[1]!.toLowerCase(), fields); // group 1 always takes part in a match
    const value = raw === undefined ? cleanSegment(m[0]) : cleanSegment(raw);
    if (value === '') {
      const next = source.charAt(last);
      if (out !== '' && JOINER.test(out.slice(-1)) && (next === '' || JOINER.test(next))) out = out.slice(0, -1);
      else if (out === '' && JOINER.test(next)) last += 1;
    }
    out += value;
  }
  out += cleanSegment(source.slice(last));
  return sanitizeFileName(out);
}

/** attempt 0 → name; 1 → name-2; 2 → name-3 ... */
export function withCollisionSuffix(baseName: string, attempt: number): string {
  if (!Number.isSafeInteger(attempt) || attempt < 0) throw new RangeError(`Invalid attempt: ${attempt}`);
  return attempt === 0 ? baseName : `${baseName}-${attempt + 1}`;
}
