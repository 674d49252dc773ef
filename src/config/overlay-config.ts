import { isRecord } from "./config-validation-error";

/**
 * Keys whose value may be a shorthand (`true`, `false`, `"auto"`) for an object `{ enabled }`. When a
 * layer writes the object form over the shorthand (or the reverse), the shorthand is first read as
 * `{ enabled: value }`, so `{ "codeMode": { "timeoutMs": 400 } }` over `"codeMode": true` keeps code
 * mode on, and `"codeMode": false` over an object turns it off and keeps the limits.
 */
const SHORTHAND_KEYS = new Set(["codeMode", "toolSearch", "swarm"]);

/**
 * Lays `overlay` over `base` key by key (JSON Merge Patch, RFC 7386, plus the shorthands above):
 * objects merge recursively, `null` removes the key, anything else (arrays included) replaces. Neither
 * input is changed; the result shares no objects with them. Validation happens after, on the result.
 */
export function overlayConfig(base: unknown, overlay: unknown): unknown {
  if (!isRecord(overlay)) return clone(overlay);
  const out: Record<string, unknown> = isRecord(base) ? (clone(base) as Record<string, unknown>) : {};
  for (const key of Object.keys(overlay)) {
    const value = overlay[key];
    if (value === null) {
      delete out[key];
      continue;
    }
    let below = Object.hasOwn(out, key) ? out[key] : undefined;
    let above: unknown = value;
    if (SHORTHAND_KEYS.has(key) && (isRecord(below) || isRecord(above))) {
      above = isShorthand(above) ? { enabled: above } : asObjectForm(key, above, isRecord(below));
      below = isShorthand(below) ? { enabled: below } : asObjectForm(key, below, false);
    }
    define(out, key, isRecord(above) ? overlayConfig(isRecord(below) ? below : {}, above) : clone(above));
  }
  return out;
}

function isShorthand(value: unknown): value is boolean | "auto" {
  return typeof value === "boolean" || value === "auto";
}

/**
 * `toolSearch: { mode: "tools" }` alone means enabled (parse-tools-section.ts): say so before it meets a
 * `false` below. Over an object, an object without `enabled` inherits the one below instead.
 */
function asObjectForm(key: string, value: unknown, overObject: boolean): unknown {
  if (key === "toolSearch" && !overObject && isRecord(value) && !Object.hasOwn(value, "enabled")) return { enabled: true, ...value };
  return value;
}

function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) define(out, key, clone(value[key]));
  return out;
}

/** An own data property, even for a key named `__proto__`. */
function define(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
