import { MAX_DECLARATION_TEXT_CHARS } from "../limits";
/**
 * JSDoc comments from untrusted text (MCP descriptions, property names, defaults). Pure.
 *
 * RULE: whatever the text, the comment ends exactly where we end it, and the text cannot pose
 * as declaration code or as a JSDoc tag:
 * - every line terminator JavaScript knows (CR, LF, CRLF, U+2028, U+2029) and NEL (U+0085)
 *   becomes a new comment line, each starting with ` * `;
 * - a star followed by a slash (the one sequence that closes a block comment) gets a backslash
 *   between them;
 * - an `@` that could start a tag gets `\@` (no forged `@param`/`@deprecated`/`{@link}`):
 *   TypeScript reads a tag at a line's start and after any whitespace mid-line, so every `@`
 *   not preceded by a word character (as in `a@b.com`) or a backslash is escaped;
 * - C0/C1 control characters and the bidirectional overrides/isolates (U+202A–U+202E,
 *   U+2066–U+2069, "Trojan Source") are removed;
 * - text is cut to `maxChars` code points first (never splitting a surrogate pair), with `…`.
 */

const LINE_BREAK = /\r\n|[\r\n\u2028\u2029\u0085]/;
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u0084\u0086-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** An `@` at the start or after anything but a word character or a backslash (see RULE). */
const TAG_AT = /(?<![\w\\])@/g;

/** Cut to `maxChars` code points, marking the cut with `…`. */
export function boundText(text: string, maxChars: number): string {
  const points = Array.from(text);
  return points.length <= maxChars ? text : points.slice(0, maxChars).join("") + "…";
}

/** One untrusted text as safe comment lines (without the ` * ` prefix). */
export function commentLines(text: string, maxChars = MAX_DECLARATION_TEXT_CHARS): string[] {
  return boundText(text, maxChars)
    .split(LINE_BREAK)
    .map((line) => line.replace(INVISIBLE, "").replace(/\t/g, "  ").replace(/\*\//g, "*\\/").replace(TAG_AT, "\\@").trimEnd());
}

/** A `/** … *\/` block at `indent` from lines already made safe by `commentLines`. */
export function jsdocBlock(lines: readonly string[], indent: string): string {
  const body = [...lines];
  while (body.length > 0 && body[body.length - 1] === "") body.pop();
  while (body.length > 0 && body[0] === "") body.shift();
  if (body.length === 0) return "";
  if (body.length === 1) return `${indent}/** ${body[0]} */\n`;
  return `${indent}/**\n${body.map((l) => (l === "" ? `${indent} *` : `${indent} * ${l}`)).join("\n")}\n${indent} */\n`;
}
