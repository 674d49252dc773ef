/**
 * Byte-counting helpers for the output budget (pure, allocation-free scans).
 *
 * Two measures are used:
 * - raw UTF-8 bytes of a string (what `TextEncoder` produces: a lone surrogate is encoded as
 *   U+FFFD, 3 bytes) — used for `omittedBytes` and raw prefixes of JSON text;
 * - serialized bytes of a string as a JSON string literal, i.e. the UTF-8 bytes of
 *   `JSON.stringify(s)` (well-formed stringify: `"`/`\` and `\b\t\n\f\r` cost 2, other C0
 *   controls and lone surrogates cost 6 as `\uXXXX`, everything else its UTF-8 size).
 *
 * Prefix helpers never split a surrogate pair (a UTF-16 prefix at a code point boundary is
 * always a whole-character UTF-8 prefix).
 */

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowAt(s: string, i: number): boolean {
  return i < s.length && (s.charCodeAt(i) & 0xfc00) === 0xdc00;
}

/** UTF-8 byte length of `s` (lone surrogates count 3, like TextEncoder's U+FFFD). */
export function utf8ByteLength(s: string): number {
  let bytes = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (isHigh(c) && isLowAt(s, i + 1)) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Number of UTF-16 code units of the longest code-point-safe prefix of `s` within `maxBytes` UTF-8 bytes. */
export function utf8PrefixLength(s: string, maxBytes: number): number {
  let bytes = 0;
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    let units = 1;
    let cost: number;
    if (c < 0x80) cost = 1;
    else if (c < 0x800) cost = 2;
    else if (isHigh(c) && isLowAt(s, i + 1)) {
      cost = 4;
      units = 2;
    } else cost = 3;
    if (bytes + cost > maxBytes) break;
    bytes += cost;
    i += units;
  }
  return i;
}

/** UTF-8-safe prefix: the longest prefix of `text` whose UTF-8 encoding fits `maxBytes`, never splitting a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
  const len = utf8PrefixLength(text, maxBytes);
  return len === text.length ? text : text.slice(0, len);
}

/** Serialized size of one non-surrogate code unit inside a JSON string literal. */
function escapedUnitBytes(c: number): number {
  if (c < 0x20) return c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  return 3;
}

/**
 * Code units of the longest code-point-safe prefix of `s` whose JSON-string serialization
 * (without the two quotes) fits `maxBytes` UTF-8 bytes.
 */
export function jsonStringPrefixLength(s: string, maxBytes: number): number {
  let bytes = 0;
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    let units = 1;
    let cost: number;
    if (c >= 0xd800 && c <= 0xdfff) {
      if (isHigh(c) && isLowAt(s, i + 1)) {
        cost = 4;
        units = 2;
      } else cost = 6; // lone surrogate -> \udXXX
    } else cost = escapedUnitBytes(c);
    if (bytes + cost > maxBytes) break;
    bytes += cost;
    i += units;
  }
  return i;
}

/** UTF-8 bytes of `JSON.stringify(s)` (quotes included), computed without allocating. */
export function jsonStringBytes(s: string): number {
  let bytes = 2;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      if (isHigh(c) && isLowAt(s, i + 1)) {
        bytes += 4;
        i++;
      } else bytes += 6;
    } else bytes += escapedUnitBytes(c);
  }
  return bytes;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Normalize valid JSON text so that it has no raw lone surrogates (they can only occur inside
 * string literals, where `\uXXXX` is the equivalent well-formed spelling that the host's
 * `JSON.stringify` would emit). Returns the input unchanged in the common case.
 */
export function escapeLoneSurrogates(jsonText: string): string {
  LONE_SURROGATE.lastIndex = 0;
  if (!LONE_SURROGATE.test(jsonText)) return jsonText;
  return jsonText.replace(LONE_SURROGATE, (ch) => `\\u${ch.charCodeAt(0).toString(16)}`);
}
