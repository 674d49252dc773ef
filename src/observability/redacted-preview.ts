/**
 * Bounded, redacted display text of a nested tool call's input or result (seed 002, "Nested tool
 * execution": completed nested calls persist as bounded, redacted, display-only activity).
 *
 * RULES
 * - The text is compact JSON of the value, with:
 *   - under a credential-named key (credential-names.ts: `apiKey`, `password`, `Authorization`,
 *     `credentials` …) every string, number and bigint leaf becomes `"***"`; `true`, `false`
 *     and `null` stay (they are settings, not secrets);
 *   - every other string and every key masked by the shared text masks (secret-shapes.ts:
 *     recognizable tokens, registered secrets, configured patterns, `password=…` pairs);
 *   - characters that can disguise text (bidirectional controls, invisible format characters,
 *     fillers: disguised-text.ts) written as JSON escapes (`\u202E`), in keys and values alike:
 *     the text shows them instead of applying them, and is still JSON of the same value.
 * - It is display-only and never parsed back: anything JSON cannot say is written as a marker
 *   instead of throwing. A cycle is `"[Circular]"`, nesting past MAX_JSON_DEPTH is `"[Too deep]"`,
 *   a getter or `toJSON` that throws is `"[Unreadable]"`; a bigint is written as its digits;
 *   `undefined`, functions and symbols follow JSON (dropped from objects, `null` elsewhere).
 * - BOUND: the result is at most `maxBytes` UTF-8 bytes. Longer text keeps its leading part, cut
 *   on a character boundary, and ends with `…[N bytes omitted]` (N counts the redacted JSON's
 *   bytes left out). A budget too small for that marker gets the bare `…` (or nothing).
 *   Redaction happens before the cut, so the cut can never expose part of a secret.
 * Work is linear in the size of the value.
 */

import { utf8ByteLength, utf8Prefix } from "../code-mode";
import { MAX_JSON_DEPTH } from "../limits";
import { isCredentialName } from "./credential-names";
import { escapeDisguisingJson } from "./disguised-text";
import { MASK, maskKeyedValues, maskSecrets, type RedactOptions } from "./secret-shapes";

const MASKED = JSON.stringify(MASK);
const ELLIPSIS = "…";

/** Bounded, redacted display text of `value` (see the module rules). Never throws. */
export function redactedPreview(value: unknown, maxBytes: number, opts: RedactOptions = {}): string {
  const budget = Number.isFinite(maxBytes) && maxBytes > 0 ? Math.floor(maxBytes) : 0;
  let json: string;
  try {
    json = new PreviewWriter(opts).write(value);
  } catch {
    json = '"[Unreadable]"';
  }
  const total = utf8ByteLength(json);
  if (total <= budget) return json;
  // The omitted count is at most `total`, so a marker sized for `total` always fits.
  const room = budget - utf8ByteLength(omittedMarker(total));
  if (room < 0) return utf8Prefix(ELLIPSIS, budget);
  const head = utf8Prefix(json, room);
  return head + omittedMarker(total - utf8ByteLength(head));
}

function omittedMarker(omittedBytes: number): string {
  return `${ELLIPSIS}[${omittedBytes} bytes omitted]`;
}

class PreviewWriter {
  private readonly ancestors = new Set<object>();

  constructor(private readonly opts: RedactOptions) {}

  write(value: unknown): string {
    return this.value(value, "", false, 0) ?? "null";
  }

  private text(s: string): string {
    return escapeDisguisingJson(JSON.stringify(maskKeyedValues(maskSecrets(s, this.opts))));
  }

  /** JSON text of `value`, or undefined where JSON drops it (an object member that is undefined). */
  private value(raw: unknown, key: string, secret: boolean, depth: number): string | undefined {
    let value = raw;
    if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
      try {
        value = (value as { toJSON(key: string): unknown }).toJSON(key);
      } catch {
        return '"[Unreadable]"';
      }
    }
    switch (typeof value) {
      case "string":
        return secret ? MASKED : this.text(value);
      case "number":
        return secret ? MASKED : Number.isFinite(value) ? String(value) : "null";
      case "bigint":
        return secret ? MASKED : value.toString();
      case "boolean":
        return String(value);
      case "object":
        return value === null ? "null" : this.object(value, secret, depth);
      default:
        return undefined; // undefined, function, symbol
    }
  }

  private object(value: object, secret: boolean, depth: number): string {
    if (this.ancestors.has(value)) return '"[Circular]"';
    if (depth >= MAX_JSON_DEPTH) return '"[Too deep]"';
    this.ancestors.add(value);
    try {
      if (Array.isArray(value)) {
        const items: string[] = [];
        for (let i = 0; i < value.length; i++) items.push(this.member(value, i, String(i), secret, depth) ?? "null");
        return `[${items.join(",")}]`;
      }
      const members: string[] = [];
      for (const key of Object.keys(value)) {
        const json = this.member(value, key, key, secret || isCredentialName(key), depth);
        if (json !== undefined) members.push(`${this.text(key)}:${json}`);
      }
      return `{${members.join(",")}}`;
    } finally {
      this.ancestors.delete(value);
    }
  }

  private member(container: object, index: string | number, key: string, secret: boolean, depth: number): string | undefined {
    let item: unknown;
    try {
      item = (container as Record<string | number, unknown>)[index];
    } catch {
      return '"[Unreadable]"';
    }
    return this.value(item, key, secret, depth + 1);
  }
}
