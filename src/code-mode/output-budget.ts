/**
 * Output budget for one code-mode cell (seed 002, "Output API").
 *
 * Guest `text()` / `json()` output and the final value (or failure diagnostic) share ONE
 * `maxOutputBytes` serialized UTF-8 budget across all waits of a cell. This module does the
 * accounting and the bounded projection; it is pure (no I/O) and its state is plain JSON so a
 * parked cell can resume the same budget in another process.
 *
 * BYTE-COUNTING RULE (applied everywhere):
 * - Output is measured as the UTF-8 bytes of the serialized `output` array. Each item costs the
 *   UTF-8 bytes of its compact JSON (`{"type":"text","text":"..."}` exactly as `JSON.stringify`
 *   writes it, or `{"type":"json","value":<compact json>}`) plus 1 byte for its separator; a
 *   non-empty array then costs `1 + Σ cost` (brackets minus the one missing comma). An absent
 *   `output` (no items) costs 0.
 * - A value costs the UTF-8 bytes of its compact JSON text; `undefined` is reported as `null`
 *   (4 bytes).
 * - An error costs the UTF-8 bytes of `JSON.stringify(error)` (quotes and escapes included).
 * - Truncation markers' `prefix` / `omittedBytes` describe the RAW UTF-8 bytes of the original
 *   compact JSON (for output: the JSON array of the omitted items, brackets and commas
 *   included); the prefix is sized so that its serialized (escaped) form fits the share.
 *
 * RESERVATION: with `half = floor(max / 2)` and `O` = full output cost, `R` = value/error cost:
 * if `O <= half` the output is kept whole and the value may use `max - O`; else if `R <= half`
 * the value keeps its full size and the output gets `max - R`; else each gets half.
 * Output beyond its share keeps the leading items that fit, then ONE final marker item
 * `{ type: "json", value: { truncated, prefix, omittedBytes, guidance } }`.
 *
 * BOUND: `bytes(JSON.stringify(output)) + bytes(JSON.stringify(value | error))` never exceeds
 * `maxOutputBytes + OUTPUT_ENVELOPE_OVERHEAD_BYTES` (512). The overhead is only used when a
 * share is too small to hold a marker's fixed keys/guidance (or the minimum error cause);
 * for `maxOutputBytes >= 1024` the projection fits `maxOutputBytes` itself.
 */
import type { CodeModeOutput } from "./types";
import { escapeLoneSurrogates, jsonStringBytes, jsonStringPrefixLength, utf8ByteLength, utf8Prefix, utf8PrefixLength } from "./output-budget-utf8";

export { utf8Prefix, utf8ByteLength } from "./output-budget-utf8";

export const TRUNCATION_GUIDANCE =
  "Partial result: exceeded maxOutputBytes. Rerun with narrower arguments: reduce the scope, paginate, select fewer items, or return a smaller projection.";

/** Appended to oversized errors; they always end with exactly `[error truncated]`. */
export const ERROR_TRUNCATED_SUFFIX = "\n[error truncated]";

/** Max bytes a projection may exceed `maxOutputBytes` by (marker keys/guidance on tiny budgets). */
export const OUTPUT_ENVELOPE_OVERHEAD_BYTES = 512;

/** An oversized error keeps at least this many serialized bytes (cause + suffix), whatever the share. */
export const MIN_ERROR_BYTES = 96;

export type TruncationMarker = { truncated: true; prefix: string; omittedBytes: number; guidance: string };

type StoredItem = { type: "text"; text: string } | { type: "json"; json: string };

export type OutputBudgetState = {
  version: 1;
  maxOutputBytes: number;
  /** Leading items stored whole (their output array never exceeds maxOutputBytes). */
  kept: StoredItem[];
  /** Items after the first one that did not fit: counted, never stored whole. */
  overflowCount: number;
  /** Σ UTF-8 bytes of the overflow items' JSON (separators excluded). */
  overflowBytes: number;
  /** Leading ≤ maxOutputBytes UTF-8 bytes of the overflow items' JSON joined by ",". */
  overflowPrefix: string;
};

const TEXT_HEAD = '{"type":"text","text":';
const JSON_HEAD = '{"type":"json","value":';

function textItemBytes(text: string): number {
  return TEXT_HEAD.length + jsonStringBytes(text) + 1;
}

function itemJson(item: StoredItem): string {
  return item.type === "text" ? `${TEXT_HEAD}${JSON.stringify(item.text)}}` : `${JSON_HEAD}${item.json}}`;
}

function itemBytes(item: StoredItem): number {
  return item.type === "text" ? textItemBytes(item.text) : JSON_HEAD.length + utf8ByteLength(item.json) + 1;
}

function toOutput(item: StoredItem): CodeModeOutput {
  return item.type === "text" ? { type: "text", text: item.text } : { type: "json", value: JSON.parse(item.json) };
}

/** Parse guest JSON text; unparseable text becomes a string value. */
function normalizeJson(text: string): { json: string; value: unknown } {
  try {
    return { json: escapeLoneSurrogates(text), value: JSON.parse(text) };
  } catch {
    return { json: JSON.stringify(text), value: text };
  }
}

function marker(prefix: string, omittedBytes: number): TruncationMarker {
  return { truncated: true, prefix, omittedBytes, guidance: TRUNCATION_GUIDANCE };
}

/** Serialized bytes of a marker with an empty prefix (upper bound once `omittedBytes <= maxOmitted`). */
function markerFixedBytes(maxOmitted: number): number {
  return utf8ByteLength(JSON.stringify(marker("", maxOmitted)));
}

/** Bounded marker describing `source` (total raw bytes `totalBytes`) within `share` serialized bytes. */
function valueMarker(source: string, totalBytes: number, budget: number): TruncationMarker {
  const prefix = source.slice(0, jsonStringPrefixLength(source, Math.max(0, budget)));
  return marker(prefix, totalBytes - utf8ByteLength(prefix));
}

function safeString(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return String(value);
  } catch {
    return "[unprintable]";
  }
}

function clampBudget(n: number): number {
  if (typeof n !== "number" || Number.isNaN(n) || n < 0) return 0;
  return Math.min(Math.floor(n), Number.MAX_SAFE_INTEGER);
}

export class OutputBudget {
  private readonly max: number;
  private kept: StoredItem[] = [];
  private keptCosts: number[] = [];
  /** Σ (item bytes + 1) of kept items. */
  private keptCost = 0;
  private overflowCount = 0;
  private overflowBytes = 0;
  private overflowPrefix = "";
  private overflowPrefixBytes = 0;

  constructor(maxOutputBytes: number) {
    this.max = clampBudget(maxOutputBytes);
  }

  /** Record one text() item. Never throws; memory stays bounded (see class docs). */
  pushText(text: string): void {
    const t = safeString(text);
    this.push({ type: "text", text: t }, textItemBytes(t));
  }

  /** Record one json() item given its compact JSON text (unparseable text -> string value; non-string -> null). */
  pushJson(jsonText: string): void {
    let json: string;
    try {
      json = typeof jsonText === "string" ? normalizeJson(jsonText).json : "null";
    } catch {
      json = "null";
    }
    const item: StoredItem = { type: "json", json };
    this.push(item, itemBytes(item));
  }

  /** Projection for a completed cell; `undefined` is reported as `value: null`. */
  completed(valueJson: string | undefined): { value: unknown; output?: CodeModeOutput[] } {
    const { json, value } = typeof valueJson === "string" ? normalizeJson(valueJson) : { json: "null", value: null };
    const cost = utf8ByteLength(json);
    const { outputShare, valueShare } = this.split(cost);
    const output = this.projectOutput(outputShare);
    const projected = cost <= valueShare ? value : valueMarker(json, cost, valueShare - markerFixedBytes(cost));
    return output ? { value: projected, output } : { value: projected };
  }

  /** Projection for a failed cell; oversized errors keep their leading cause and end with `[error truncated]`. */
  failed(error: string): { error: string; output?: CodeModeOutput[] } {
    const err = safeString(error);
    const cost = jsonStringBytes(err);
    const { outputShare, valueShare } = this.split(cost);
    const output = this.projectOutput(outputShare);
    const share = Math.max(valueShare, MIN_ERROR_BYTES);
    let projected = err;
    if (cost > share) {
      const budget = share - jsonStringBytes(ERROR_TRUNCATED_SUFFIX); // includes the 2 quotes
      projected = err.slice(0, jsonStringPrefixLength(err, budget)) + ERROR_TRUNCATED_SUFFIX;
    }
    return output ? { error: projected, output } : { error: projected };
  }

  /** Output so far (cumulative, for a `waiting` result), bounded by maxOutputBytes; pure. */
  pending(): CodeModeOutput[] | undefined {
    return this.projectOutput(this.max);
  }

  toJSON(): OutputBudgetState {
    return {
      version: 1,
      maxOutputBytes: this.max,
      kept: this.kept.map((item) => ({ ...item })),
      overflowCount: this.overflowCount,
      overflowBytes: this.overflowBytes,
      overflowPrefix: this.overflowPrefix,
    };
  }

  static fromJSON(state: OutputBudgetState): OutputBudget {
    const bad = (why: string): never => {
      throw new TypeError(`invalid OutputBudgetState: ${why}`);
    };
    if (!state || typeof state !== "object" || state.version !== 1) bad("version");
    const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
    if (!isCount(state.maxOutputBytes) || !isCount(state.overflowCount) || !isCount(state.overflowBytes)) {
      bad("counters");
    }
    if (!Array.isArray(state.kept) || typeof state.overflowPrefix !== "string") bad("shape");
    const b = new OutputBudget(state.maxOutputBytes);
    for (const raw of state.kept) {
      let item: StoredItem;
      if (raw && raw.type === "text" && typeof raw.text === "string") item = { type: "text", text: raw.text };
      else if (raw && raw.type === "json" && typeof raw.json === "string") item = { type: "json", json: raw.json };
      else return bad("item");
      const cost = itemBytes(item) + 1;
      b.kept.push(item);
      b.keptCosts.push(cost);
      b.keptCost += cost;
    }
    b.overflowCount = state.overflowCount;
    b.overflowBytes = state.overflowBytes;
    b.overflowPrefix = state.overflowPrefix;
    b.overflowPrefixBytes = utf8ByteLength(state.overflowPrefix);
    if (b.overflowPrefixBytes > Math.max(b.overflowJoinedBytes(), 0)) bad("overflow prefix");
    return b;
  }

  private overflowJoinedBytes(): number {
    return this.overflowCount === 0 ? 0 : this.overflowBytes + this.overflowCount - 1;
  }

  /** Serialized bytes of the whole, untruncated output array (0 when there are no items). */
  private fullOutputBytes(): number {
    if (this.kept.length === 0 && this.overflowCount === 0) return 0;
    return 1 + this.keptCost + this.overflowBytes + this.overflowCount;
  }

  private push(item: StoredItem, bytes: number): void {
    if (this.overflowCount === 0 && 1 + this.keptCost + bytes + 1 <= this.max) {
      this.kept.push(item);
      this.keptCosts.push(bytes + 1);
      this.keptCost += bytes + 1;
      return;
    }
    // Overflow: count it; keep only the leading maxOutputBytes of the joined JSON for markers.
    const complete = this.overflowPrefixBytes === this.overflowJoinedBytes();
    const sep = this.overflowCount > 0 ? "," : "";
    this.overflowCount++;
    this.overflowBytes += bytes;
    const remaining = this.max - this.overflowPrefixBytes;
    if (!complete || remaining <= 0) return;
    let piece: string;
    if (sep.length + bytes <= remaining) {
      piece = sep + itemJson(item);
    } else {
      // Build only a bounded slice of the item; the cut below removes any synthetic tail.
      const partial: StoredItem =
        item.type === "text"
          ? { type: "text", text: item.text.slice(0, jsonStringPrefixLength(item.text, remaining)) }
          : { type: "json", json: item.json.slice(0, utf8PrefixLength(item.json, remaining)) };
      piece = utf8Prefix(sep + (partial.type === "text" ? itemJson(partial) : JSON_HEAD + partial.json), remaining);
    }
    this.overflowPrefix += piece;
    this.overflowPrefixBytes += utf8ByteLength(piece);
  }

  private split(reserveBytes: number): { outputShare: number; valueShare: number } {
    const half = Math.floor(this.max / 2);
    const out = this.fullOutputBytes();
    if (out <= half) return { outputShare: out, valueShare: this.max - out };
    if (reserveBytes <= half) return { outputShare: this.max - reserveBytes, valueShare: reserveBytes };
    return { outputShare: half, valueShare: this.max - half };
  }

  private projectOutput(share: number): CodeModeOutput[] | undefined {
    const n = this.kept.length;
    if (n === 0 && this.overflowCount === 0) return undefined;
    if (this.overflowCount === 0 && this.fullOutputBytes() <= share) return this.kept.map(toOutput);

    // Upper bound of the omitted JSON array's bytes (all kept items omitted) for the digits.
    const maxOmitted = 2 + this.keptCost + this.overflowJoinedBytes() - (this.overflowCount === 0 ? 1 : 0);
    const fixed = JSON_HEAD.length + markerFixedBytes(maxOmitted) + 1 + 1; // item braces + separator
    const avail = share - 1 - fixed;
    let used = 0;
    let k = 0;
    while (k < n && used + (this.keptCosts[k] as number) <= avail) used += this.keptCosts[k++] as number;

    const tail = this.kept.slice(k);
    const tailBytes = this.keptCost - used - tail.length; // Σ item bytes, separators excluded
    const joined =
      (tail.length > 0 ? tailBytes + tail.length - 1 : 0) + (tail.length > 0 && this.overflowCount > 0 ? 1 : 0) + this.overflowJoinedBytes();
    const totalOmitted = 2 + joined;
    let source = "[" + tail.map(itemJson).join(",");
    if (this.overflowCount > 0) source += (tail.length > 0 ? "," : "") + this.overflowPrefix;
    if (this.overflowPrefixBytes === this.overflowJoinedBytes()) source += "]";

    const output = this.kept.slice(0, k).map(toOutput);
    output.push({ type: "json", value: valueMarker(source, totalOmitted, avail - used) });
    return output;
  }
}
