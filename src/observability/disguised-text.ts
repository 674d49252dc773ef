/**
 * Characters that can disguise display text, shown escaped in what operators read (approval
 * previews, the trajectory's nested-call previews): a hostile caller could otherwise make
 * `{"to":"mallory"}` read as something else, or hide part of a value.
 *
 * RULES
 * - Escaped: controls JSON leaves raw (U+007F–U+009F: DEL and C1, e.g. a terminal's CSI); every
 *   invisible format character (category Cf: bidirectional embeddings, overrides and isolates
 *   U+202A–U+202E and U+2066–U+2069, marks U+200E/U+200F/U+061C, zero-width U+200B–U+200D,
 *   U+2060–U+2064, U+FEFF, soft hyphen, tag characters U+E0000–U+E007F …); line and paragraph
 *   separators (U+2028/U+2029); and characters that render as nothing though they are letters or
 *   marks: Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme joiner
 *   (U+034F), Khmer inherent vowels (U+17B4/U+17B5), Mongolian variation selectors
 *   (U+180B–U+180F), variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF), the braille blank
 *   (U+2800).
 * - `escapeDisguisingJson` works on JSON text: each such character becomes its JSON escape
 *   (`\u202E`; one beyond U+FFFF as its surrogate pair, `\uDB40\uDC41`), so the text stays valid
 *   JSON of the same value while showing the character instead of applying it. Such characters
 *   occur only inside JSON strings (keys and values alike); nothing else changes. Linear.
 */
// Built on first use: V8 builds a Unicode property class from ICU when the literal is evaluated.
let disguising: RegExp | undefined;
const disguisingClass = () =>
  (disguising ??= /[\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu);

/** JSON text with every disguising character written as its `\uXXXX` escape (see the module rules). */
export function escapeDisguisingJson(json: string): string {
  return json.replace(disguisingClass(), escapeUnits);
}

/**
 * Plain text (a tool name an MCP server wrote) as an operator reads it: every disguising character
 * escaped as in JSON text, and the C0 controls too (JSON text escapes those already; plain text
 * would carry NUL or a terminal's ESC as they are).
 */
export function escapeDisguisingText(text: string): string {
  return escapeDisguisingJson(text).replace(/[\u0000-\u001F]/g, escapeUnits);
}

function escapeUnits(ch: string): string {
  let out = "";
  for (let i = 0; i < ch.length; i++) out += "\\u" + ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0");
  return out;
}
