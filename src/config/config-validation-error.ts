import { configPath } from "./config-path";

/**
 * Internal to the config module: validation walks the document and throws the first problem as a
 * `ConfigValidationError`; `parseGatewayConfig` is the only place that catches it and turns it into
 * a `ConfigResult`. Nothing outside `src/config/` sees this class.
 */
export class ConfigValidationError extends Error {
  readonly path: string;

  constructor(path: string, message: string) {
    super(message);
    this.name = "ConfigValidationError";
    this.path = path;
  }
}

/** Throws a validation error whose message starts with the offending key path. */
export function fail(path: string, problem: string): never {
  throw new ConfigValidationError(path, `${path} ${problem}`);
}

/** A plain JSON object (not an array, not null, not a class instance). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Reads an own property only: a config key named `constructor` or `__proto__` must not hit Object.prototype. */
export function own(record: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A record with no prototype, safe to fill with user-chosen keys (agent ids, provider ids, model refs). */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** `$.tools.codeMode` for `tools.codeMode`; `$["odd key"]` for a bracketed root key. */
function jsonPath(path: string): string {
  if (path === "") return "$";
  return path.startsWith("[") ? `$${path}` : `$.${path}`;
}

/**
 * Refuses keys this section does not define, so a typo (`tool` for `tools`, `enabeld`) is an error
 * rather than a setting that silently never takes effect. Own keys only; the message lists what is known.
 */
export function rejectUnknownKeys(record: Readonly<Record<string, unknown>>, path: string, known: readonly string[]): void {
  for (const key of Object.keys(record)) {
    if (known.includes(key)) continue;
    throw unknownKey(path, key, `known keys here: ${known.join(", ")}`);
  }
}

/** `unknown key "tool" at $.tool; <hint>`, at the key's own path. */
export function unknownKey(path: string, key: string, hint: string): ConfigValidationError {
  const keyPath = configPath(path, key);
  return new ConfigValidationError(keyPath, `unknown key ${JSON.stringify(key)} at ${jsonPath(keyPath)}; ${hint}`);
}
