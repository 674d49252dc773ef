/**
 * THE table of recognizable secret shapes, and the text masks every redaction in this gateway
 * shares (redactSecrets for debug logs, redactSource for stored cell source, redactedPreview for
 * nested tool activity). One table, so a shape added here is masked everywhere.
 *
 * MASK RULES
 * - A mask is full: the secret part of a match becomes `***` (MASK); nothing of it is revealed.
 *   A secret shorter than the mask becomes that many `*`, so a mask NEVER makes text longer
 *   (redactSource's size bound relies on it).
 * - What stays readable is named per shape (`Bearer ***`, `https://***@host`, `?token=***`,
 *   `hooks.slack.com/services/***`).
 * - Idempotent: no shape matches a mask or a kept part, so masking twice gives the same text.
 *   Configured patterns are the caller's: each match becomes a mask (empty matches are skipped),
 *   idempotent as long as a pattern does not match text made of masks.
 * - Built-in shapes never match a quote, backtick, `$`, `{`, `}` or backslash (the PEM body takes
 *   `\n` escapes as whole pairs), so masking inside a JS string literal keeps it one literal.
 * BOUND: linear in the text. Every pattern is one left-to-right pass whose quantifiers run over
 * disjoint character classes or are length-capped; PEM blocks are found by hand in one pass. The
 * configured patterns' own cost is the operator's (config caps them at 32 × 256 characters).
 */

import { isCredentialName, isCredentialParam } from "./credential-names";

export const MASK = "***";

/** Secrets the gateway knows (bearer tokens, provider keys) and the operator's patterns. */
export type RedactOptions = {
  /** Exact secret values; each one of 8+ characters is masked wherever it occurs. */
  secrets?: readonly string[];
  /** `logging.redactPatterns`, compiled with the `g` flag; every non-empty match is masked. */
  patterns?: readonly RegExp[];
};

/** Registered secrets shorter than this are ignored (they would mask ordinary words). */
export const MIN_SECRET_CHARS = 8;

/** The mask for `secret`: `***`, or as many `*` as it has characters when it is shorter. */
export function maskOf(secret: string): string {
  return secret.length >= MASK.length ? MASK : "*".repeat(secret.length);
}

type Shape = {
  /** For tests and docs: what the shape is. */
  name: string;
  /** Global. An optional `keep` group at the start stays readable; the rest of the match is masked. */
  pattern: RegExp;
  /** Refuses look-alikes (return false and the match is left as it is). */
  accept?: (secret: string, groups: Record<string, string | undefined>) => boolean;
};

/** Token-like: has a digit, a `._+/=`, an inner capital, or is long. "Bearer authentication" is prose. */
export function looksRandom(value: string): boolean {
  return /[0-9._+/=]|[a-z][A-Z]/.test(value) || value.length >= 24;
}

export const SECRET_SHAPES: readonly Shape[] = [
  // OpenAI / Anthropic (`sk-…`, `sk-proj-…`, `sk-ant-api03-…`); `sk-learn-tutorial-…` is all lowercase.
  { name: "openai-anthropic", pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, accept: (s) => /[A-Z0-9]/.test(s.slice(3)) },
  { name: "stripe", pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}/g },
  { name: "stripe-webhook", pattern: /\bwhsec_[A-Za-z0-9]{16,}/g },
  { name: "github", pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g },
  { name: "github-fine-grained", pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g },
  { name: "gitlab", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { name: "slack", pattern: /\bxox[abeoprs]-[A-Za-z0-9-]{10,}/g },
  { name: "slack-webhook", pattern: /(?<keep>\bhooks\.slack\.com\/services\/)[A-Za-z0-9_/-]{8,}/g },
  { name: "aws-access-key-id", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: "google-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}/g },
  { name: "npm", pattern: /\bnpm_[A-Za-z0-9]{36}/g },
  { name: "huggingface", pattern: /\bhf_[A-Za-z0-9]{30,}/g },
  { name: "sendgrid", pattern: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g },
  // Starts only where a run of its characters starts (not at every `eyJ` inside one, as `\b` would:
  // `eyJ-eyJ-…` then cost a scan of the whole run per `eyJ`, quadratic).
  { name: "jwt", pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g },
  // `Authorization: Bearer …`, `Basic …`, `Token …`: the scheme stays, a token-like value is masked.
  {
    name: "auth-scheme",
    pattern: /(?<keep>\b(?:Bearer|Basic|Token)[ \t]+)[A-Za-z0-9._~+/=-]{8,}/gi,
    accept: looksRandom,
  },
  // `scheme://user:pass@host`: the whole userinfo (a token may be the user name).
  { name: "url-userinfo", pattern: /(?<keep>\b[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/)[^\s/?#@"'`\\<>{}$]+(?=@)/g },
  // `?api_key=…&token=…`, `&X-Amz-Signature=…`: the parameter name decides (credential-names.ts).
  {
    name: "query-credential",
    pattern: /(?<keep>[?&](?<param>[A-Za-z][A-Za-z0-9_.-]{0,63})=)[^&#\s"'`\\<>{}$]+/g,
    accept: (_s, groups) => isCredentialParam(groups.param ?? ""),
  },
];

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----/g;
const PEM_END = "-----END ";

/** Base64, whitespace, encrypted-key headers (`Proc-Type: 4,ENCRYPTED`), masks. */
function isPemBodyChar(c: number): boolean {
  return (
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    (c >= 48 && c <= 57) ||
    c === 43 ||
    c === 47 ||
    c === 61 ||
    c === 32 ||
    c === 9 ||
    c === 10 ||
    c === 13 ||
    c === 58 ||
    c === 44 ||
    c === 45 ||
    c === 42
  );
}

/**
 * PEM private key blocks become one mask: BEGIN line, body and END line. The body may be written
 * with `\n` escapes (inside a string literal). A block cut short (no END, or a character no key
 * has) is masked up to where it stops. One pass: each END search starts past the last one found, and a
 * search that found none is not repeated.
 */
export function maskPemBlocks(text: string): string {
  if (!text.includes("PRIVATE KEY-----")) return text;
  let out = "";
  let pos = 0;
  PEM_BEGIN.lastIndex = 0;
  // The END found last, reused while it lies ahead; none found once means none after any later BEGIN.
  let end = -2;
  for (let m = PEM_BEGIN.exec(text); m; m = PEM_BEGIN.exec(text)) {
    let i = PEM_BEGIN.lastIndex;
    if (end !== -1 && end < i) end = text.indexOf(PEM_END, i);
    const limit = end === -1 ? text.length : end;
    while (i < limit) {
      const c = text.charCodeAt(i);
      if (isPemBodyChar(c)) i++;
      else if (c === 92 /* \ */ && (text[i + 1] === "n" || text[i + 1] === "r")) i += 2;
      else break;
    }
    if (i === end) {
      const close = text.indexOf("-----", end + PEM_END.length);
      const lineEnd = text.indexOf("\n", end);
      if (close !== -1 && (lineEnd === -1 || close < lineEnd)) i = close + 5;
    }
    out += text.slice(pos, m.index) + MASK;
    pos = i;
    PEM_BEGIN.lastIndex = i;
  }
  return out + text.slice(pos);
}

function applyShape(text: string, shape: Shape): string {
  return text.replace(shape.pattern, (...args: unknown[]) => {
    const match = args[0] as string;
    const last = args[args.length - 1];
    const groups = (typeof last === "object" && last !== null ? last : {}) as Record<string, string | undefined>;
    const keep = groups.keep ?? "";
    const secret = match.slice(keep.length);
    if (secret.length === 0 || (shape.accept && !shape.accept(secret, groups))) return match;
    return keep + maskOf(secret);
  });
}

function applyPattern(text: string, pattern: RegExp): string {
  const re = pattern.global ? pattern : new RegExp(pattern.source, `${pattern.flags}g`);
  return text.replace(re, (match: string) => (match.length === 0 ? match : maskOf(match)));
}

/**
 * Masks registered secrets, PEM private keys, every SECRET_SHAPES match and the configured
 * patterns, in that order. Never longer than `text`. Used on any text: prose, code, JSON.
 */
export function maskSecrets(text: string, opts: RedactOptions = {}): string {
  let out = text;
  for (const secret of opts.secrets ?? []) {
    if (typeof secret === "string" && secret.length >= MIN_SECRET_CHARS && out.includes(secret)) out = out.split(secret).join(MASK);
  }
  out = maskPemBlocks(out);
  for (const shape of SECRET_SHAPES) out = applyShape(out, shape);
  for (const pattern of opts.patterns ?? []) out = applyPattern(out, pattern);
  return out;
}

/**
 * `name: value` / `name=value` / `"name": "value"` in free text (JSON, env files, form bodies,
 * comments): when the name is a credential name, the value is masked in full (quoted values keep
 * their quotes; a leading `Bearer `/`Basic `/`Token ` stays). `null`, `true`, `false` and
 * `undefined` are not secrets and stay. Names are at most 64 characters; values at most 512.
 */
const KEYED =
  /(?<![A-Za-z0-9_.-])(?<q>["']?)(?<name>[A-Za-z][A-Za-z0-9_.-]{0,63})\k<q>[ \t]{0,4}[:=][ \t]{0,4}(?<scheme>(?:Bearer|Basic|Token)[ \t]+)?(?<value>"(?:[^"\\\n]|\\.){1,512}"|'(?:[^'\\\n]|\\.){1,512}'|[^\s,;"'`{}()[\]<>\\]{1,512})/gi;

const NOT_SECRET_VALUES = new Set(["null", "true", "false", "undefined"]);

export function maskKeyedValues(text: string): string {
  return text.replace(KEYED, (...args: unknown[]) => {
    const match = args[0] as string;
    const g = args[args.length - 1] as Record<string, string | undefined>;
    const value = g.value ?? "";
    if (!isCredentialName(g.name ?? "") || NOT_SECRET_VALUES.has(value)) return match;
    const quote = value[0] === '"' || value[0] === "'" ? value[0] : "";
    const masked = quote ? `${quote}${maskOf(value.slice(1, -1))}${quote}` : maskOf(value);
    return match.slice(0, match.length - value.length) + masked;
  });
}
