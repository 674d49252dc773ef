/**
 * The stored form of an `exec` call's JavaScript/TypeScript `code` / `command` field (seed 002,
 * "Source in session history"). The model's program stays readable; its credentials do not.
 *
 * RULES
 * - Credential literals are masked in FULL, keeping their quotes: every string or template literal
 *   that credential-literals.ts finds in credential position (`const API_KEY = "…"`,
 *   `headers: { Authorization: "Bearer …" }`, `headers.set("x-api-key", …)`) becomes `"***"`.
 *   A template keeps its substitutions (`\`Bearer ${token}\``: they are computations) and a
 *   piece that is only an auth scheme or punctuation (`Bearer `, `:`) stays.
 * - Computations and non-secret initializers stay byte-identical: `const API_TOKEN = computeToken();`,
 *   `const DEBUG = true`, `let token = null`, `const password = await vault.get("db")`.
 * - Everywhere else (other literals, comments, code) recognizable tokens, registered secrets and
 *   configured patterns are masked (secret-shapes.ts); inside other literals and comments, so are
 *   `name: value` / `name=value` pairs with a credential name (`"password=hunter2&user=bob"`).
 *   A literal whose partial masks would no longer be one well-formed literal is masked whole.
 * - Everything else is byte-identical: identifiers, punctuation, whitespace, comments and prose.
 * - Idempotent: redacting stored source again gives the same text (masks are fixed points and
 *   never change where a literal or comment begins or ends). Not guaranteed for the corner of a
 *   recognizable token written as bare code right next to a `/`, nor for configured patterns that
 *   match masks.
 * - Never longer than the input (masks never grow text), so the capped form below stays under the cap.
 * BOUND: one tokenizer pass, one planning pass and linear masks. Source over
 * MAX_REDACTED_SOURCE_BYTES (UTF-8) is "diagnostic masked": its leading part (cut at a line end
 * when one is near) is redacted and stored with a final `// …[N bytes omitted …]` line; stored
 * that way, it is recognized and kept when redacted again.
 */

import { utf8ByteLength, utf8Prefix } from "../code-mode";
import { MAX_REDACTED_SOURCE_BYTES } from "../limits";
import { tokenize, Tok } from "../js-tokens";
import { credentialLiterals } from "./credential-literals";
import { maskKeyedValues, maskOf, maskSecrets, type RedactOptions } from "./secret-shapes";

/** Room kept under the cap for the omitted-bytes marker. */
const MARKER_RESERVE_BYTES = 128;
/** A capped head is cut back to its last line end when one is this close to the cut. */
const LINE_BACKTRACK_CHARS = 4096;
const OMITTED_MARKER = /\n\/\/ …\[\d{1,15} bytes omitted: source over \d{1,15} bytes is stored diagnostic-masked\]$/;
const MARKER_MAX_CHARS = 120;

function omittedMarker(omittedBytes: number): string {
  return `\n// …[${omittedBytes} bytes omitted: source over ${MAX_REDACTED_SOURCE_BYTES} bytes is stored diagnostic-masked]`;
}

/**
 * Redacts `source` for storage (see the module rules). Pure; never throws on any string.
 * `secrets` are exact values to mask (8+ chars); `patterns` are the configured
 * `logging.redactPatterns` (GatewayConfig.redactPatterns).
 */
export function redactSource(source: string, opts: RedactOptions = {}): string {
  const text = typeof source === "string" ? source : "";
  // One exec's source is stored three times (its transcript message, its display input, its
  // trajectory call): redacted once per source and options, as it is pure.
  if (text.length > MEMO_MAX_CHARS) return redactUncached(text, opts);
  const key = `${optionsKey(opts)}\u0002${text}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const out = redactUncached(text, opts);
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
  memo.set(key, out);
  return out;
}

/** Recently redacted sources, keyed by their options and text (isolate-wide, a few entries). */
const MEMO_ENTRIES = 16;
/** Longer sources are redacted each time (rare; keeps the memo small). */
const MEMO_MAX_CHARS = 16_384;
const memo = new Map<string, string>();

/** The options as text: every secret and pattern source (the options are rebuilt per call, so not by identity). */
function optionsKey(opts: RedactOptions): string {
  let key = "";
  for (const secret of opts.secrets ?? []) key += `${secret}\u0000`;
  key += "\u0001";
  for (const pattern of opts.patterns ?? []) key += `${pattern.source}\u0000`;
  return key;
}

function redactUncached(text: string, opts: RedactOptions): string {
  const bytes = utf8ByteLength(text);
  if (bytes <= MAX_REDACTED_SOURCE_BYTES) {
    const marker = OMITTED_MARKER.exec(text.slice(-MARKER_MAX_CHARS));
    if (!marker) return redactWhole(text, opts);
    const body = text.slice(0, text.length - marker[0].length);
    return redactWhole(body, opts) + maskSecrets(marker[0], opts);
  }
  let head = utf8Prefix(text, MAX_REDACTED_SOURCE_BYTES - MARKER_RESERVE_BYTES);
  const lineEnd = head.lastIndexOf("\n");
  if (lineEnd >= 0 && lineEnd >= head.length - LINE_BACKTRACK_CHARS) head = head.slice(0, lineEnd);
  return redactWhole(head, opts) + maskSecrets(omittedMarker(bytes - utf8ByteLength(head)), opts);
}

function redactWhole(source: string, opts: RedactOptions): string {
  const tokens = tokenize(source);
  const credential = credentialLiterals(tokens);
  const parts: string[] = [];
  let pos = 0;
  let afterRegex = false;
  for (let i = 0; i < tokens.count; i++) {
    const kind = tokens.kind[i];
    if (kind !== Tok.String && kind !== Tok.Template && kind !== Tok.Regex) continue;
    const start = tokens.start[i]!;
    const end = tokens.end[i]!;
    parts.push(maskCodeAndComments(source.slice(pos, start), afterRegex, opts));
    const content = source.slice(start, end);
    if (kind === Tok.Regex) parts.push(maskRegexContent(content, opts));
    else if (credential[i]) parts.push(maskCredentialContent(content));
    else parts.push(maskLiteralContent(content, kind === Tok.Template ? "`" : source[start - 1]!, opts));
    pos = end;
    afterRegex = kind === Tok.Regex;
  }
  parts.push(maskCodeAndComments(source.slice(pos), afterRegex, opts));
  return parts.join("");
}

/** Scheme words and punctuation alone are not a secret: `"Bearer "`, `:`, or an existing mask. */
function isHarmless(content: string): boolean {
  const rest = content.replace(/\b(?:Bearer|Basic|Token)\b/gi, "");
  return /^[\s*]*$/.test(rest) || /^\s*[:=;,&@/.|-]\s*$/.test(rest);
}

function maskCredentialContent(content: string): string {
  return isHarmless(content) ? content : maskOf(content);
}

/** Partial masks inside a non-credential literal, or the whole literal when they would break it. */
function maskLiteralContent(content: string, delimiter: string, opts: RedactOptions): string {
  const masked = maskKeyedValues(maskSecrets(content, opts));
  if (masked === content) return content;
  return isWellFormed(masked, delimiter) ? masked : maskOf(content);
}

/** Would `content` still be the whole content of one literal with this delimiter? */
function isWellFormed(content: string, delimiter: string): boolean {
  const template = delimiter === "`";
  for (let i = 0; i < content.length; i++) {
    const c = content[i];
    if (c === "\\") {
      if (++i >= content.length) return false;
    } else if (template ? c === "`" || (c === "$" && content[i + 1] === "{") : c === delimiter || c === "\n" || c === "\r") {
      return false;
    }
  }
  return true;
}

/** A regex literal with a secret in it becomes `[***]` (a mask there must not start with `*`, which would open a comment). */
function maskRegexContent(content: string, opts: RedactOptions): string {
  if (maskSecrets(content, opts) === content) return content;
  return content.length >= 5 ? "[***]" : ".".repeat(content.length);
}

/**
 * Text between literals: code, whitespace, comments and the literals' own delimiters (a regex's
 * closing `/` and flags first). Comments also get the keyed-value masks; code only the token masks.
 */
function maskCodeAndComments(region: string, afterRegex: boolean, opts: RedactOptions): string {
  let i = 0;
  if (afterRegex && region[0] === "/") {
    i = 1;
    while (i < region.length && /[\p{ID_Continue}$]/u.test(region[i]!)) i++;
  }
  let out = "";
  let code = 0;
  for (;;) {
    const slash = region.indexOf("/", i);
    if (slash === -1 || slash + 1 >= region.length) break;
    const next = region[slash + 1];
    if (next !== "/" && next !== "*") {
      i = slash + 1;
      continue;
    }
    const end = next === "/" ? lineEnd(region, slash) : blockEnd(region, slash);
    out += maskSecrets(region.slice(code, slash), opts) + maskComment(region.slice(slash, end), opts);
    code = i = end;
  }
  return out + maskSecrets(region.slice(code), opts);
}

const LINE_TERMINATOR = /[\n\r\u2028\u2029]/g;

function lineEnd(text: string, from: number): number {
  LINE_TERMINATOR.lastIndex = from;
  return LINE_TERMINATOR.exec(text)?.index ?? text.length;
}

function blockEnd(text: string, from: number): number {
  const close = text.indexOf("*/", from + 2);
  return close === -1 ? text.length : close + 2;
}

/** Masks a comment's text, never its delimiters; a block comment's text may not gain a closing delimiter. */
function maskComment(comment: string, opts: RedactOptions): string {
  const line = comment[1] === "/";
  const closed = !line && comment.length >= 4 && comment.endsWith("*/");
  const body = comment.slice(2, closed ? -2 : undefined);
  let masked = maskKeyedValues(maskSecrets(body, opts));
  if (masked === body) return comment;
  if (!line && masked.includes("*/")) masked = maskOf(body);
  return comment.slice(0, 2) + masked + (closed ? "*/" : "");
}
