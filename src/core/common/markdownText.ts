// Text from outside (an MCP client's name, a prompt, a model's name or description, a style's or a
// file's name, a gateway's message) as plain text where VS Code would read it as markup: the
// Markdown of previews (markdown-it with linkify, HTML and math on), of hovers, tooltips and chat
// (marked, with GitHub's autolinks), and the links of notifications.
//
// A backslash escape is not enough: markdown-it 12 and marked still link `https\://evil.example`
// and `a\@b\.com`, because they look for links in the text after the escapes are removed. A numeric
// character reference is never markup (CommonMark) and is not seen by linkify either (markdown-it 13+
// keeps it a token of its own; 12 and marked find no `:`, `/`, `.` or `@` to start a link in the
// source). So the characters that make markup or links are written as references; the reader sees
// the same text, and no link, emphasis, tag, math, table cell or theme icon is made of it. The
// others stay as they are, so a report stays readable as a file: a dot or colon before a space
// ends a sentence, and `-`, `+`, `=` or `1.` make a list or a heading only at the start. Pure.

/**
 * What is markup anywhere (emphasis, code, links, images, HTML, entities, tables, math, headings),
 * what starts a link (`@`, `/`), and a dot or colon with more after it (`evil.example`, `https:`).
 */
const MARKUP = /[\\`*_[\]<>|~&$#@/]|[.:](?=\S)/g;
/** At the start of a line: indentation (a code block), or a list's or a setext heading's marker. */
const AT_START = /^([ \t]*)([-+=]|\d{1,9}[.)])?/;
/** Line breaks would end a table row or a paragraph, or start a heading or a list. */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;
/** markdown-it 12 looks for links in a paragraph with `localhost` in it even without a dot or colon. */
const LOCALHOST = /l(?=ocalhost)/gi;
/** VS Code's theme icon syntax, `$(name)` or `$(name~modifier)`, in a MarkdownString with supportThemeIcons. */
const THEME_ICON = /\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;

/** Outside text as the same text in Markdown, on one line. `themeIcons`: the MarkdownString reads `$(name)` as an icon. */
export function markdownText(text: string, options: { themeIcons?: boolean } = {}): string {
  const oneLine = text.replace(LINE_BREAK, ' ');
  if (!options.themeIcons) return encode(oneLine, true);
  // VS Code's own escape for an icon (`\$(name)`, which it shows as `$(name)`): a decoded
  // reference would still become an icon, because VS Code looks for icons in the rendered HTML.
  // With a modifier that escape needs a bare `~`, and two of them would strike the text between
  // through: there an invisible word joiner after the `$` keeps the icon from being made.
  let out = '';
  let last = 0;
  for (const match of oneLine.matchAll(THEME_ICON)) {
    const name = match[1]!;
    out += encode(oneLine.slice(last, match.index), last === 0) + (name.includes('~') ? `$\u2060${encode(`(${name})`, false)}` : `\\$(${name})`);
    last = match.index + match[0].length;
  }
  return out + encode(oneLine.slice(last), last === 0);
}

const reference = (c: string) => `&#${c.charCodeAt(0)};`;

function encode(text: string, atStart: boolean): string {
  const body = text.replace(MARKUP, reference).replace(LOCALHOST, reference);
  if (!atStart) return body;
  return body.replace(
    AT_START,
    (_, spaces: string, marker: string | undefined) => [...spaces].map(reference).join('') + (marker ?? '').replace(/\D$/, reference),
  );
}

/**
 * Outside text inside a notification's message. VS Code shows `[label](https://…)`, `(command:…)` and
 * `(file:…)` there as a link (a command link runs the command when clicked); other Markdown stays
 * text. A space between `]` and `(` leaves the words as they are and makes no link.
 */
export function messageText(text: string): string {
  return text.replace(/\]\(/g, '] (');
}
