/**
 * THE reserved-name rule for every name a tool or server gives to something the guest reaches:
 * bare catalog globals (catalog/callable-names.ts) and namespace members — MCP servers under
 * `MCP`, tools under `MCP.<server>` (mcp/mcp-names.ts). A reserved name is never taken as it is;
 * each naming scheme renames it its own way (a hash suffix for globals, a `_` prefix for MCP
 * members) and the declarations show the renamed spelling.
 *
 * Two parts:
 * - JS_RESERVED_WORDS: keywords, strict-mode reserved words, the contextual `async`/`of`, and the
 *   global constants and pseudo-variables (`undefined NaN Infinity eval arguments`).
 * - OBJECT_PROTOCOL_NAMES: names the engine or the runtime read *and call* on any object: every
 *   `Object.prototype` member (an own one shadows it), `then` (a thenable: `await MCP.x` would call
 *   it) and `toJSON` (`JSON.stringify(MCP.x)` would call it); plus every `__`-prefixed name
 *   (`__proto__` and the legacy accessors). Symbol-keyed protocols (`Symbol.iterator`,
 *   `Symbol.toPrimitive`, …) cannot be named by a string, so no tool can take them.
 */
export const JS_RESERVED_WORDS: ReadonlySet<string> = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await async of " +
    "undefined NaN Infinity eval arguments"
  ).split(" "),
);

export const OBJECT_PROTOCOL_NAMES: ReadonlySet<string> = new Set(
  (
    "constructor hasOwnProperty isPrototypeOf propertyIsEnumerable toLocaleString toString valueOf then toJSON " +
    "__proto__ __defineGetter__ __defineSetter__ __lookupGetter__ __lookupSetter__"
  ).split(" "),
);

/** A name the engine or runtime would read and call on an object that had it as an own member. */
export function isProtocolName(name: string): boolean {
  return OBJECT_PROTOCOL_NAMES.has(name) || name.startsWith("__");
}

/** Reserved for any guest-visible name: a keyword-like word or a protocol name. */
export function isReservedGuestName(name: string): boolean {
  return JS_RESERVED_WORDS.has(name) || isProtocolName(name);
}

/**
 * Globals a raw tool never overwrites: the code-mode guest API (seed "Guest runtime API"
 * and "Tool names and collisions", Swarm globals included) and the language's own built-ins.
 * Static, because names are assigned on the host without a VM (and plugin namespaces are checked
 * against it when they are defined); test/unit/catalog/catalog.test.ts
 * checks it covers every own global of a fresh guest VM, so an engine upgrade cannot drift.
 */
export const SPECIALIZED_GLOBALS = new Set(
  (
    "catalog MCP API nodes skills namespaces text json yield_control setTimeout clearTimeout agents phase log " +
    "globalThis Object Function Array Number String Boolean Symbol BigInt Math JSON Date RegExp Error TypeError " +
    "RangeError SyntaxError ReferenceError EvalError URIError AggregateError InternalError SuppressedError Promise " +
    "Proxy Reflect Map Set WeakMap WeakSet WeakRef FinalizationRegistry DisposableStack AsyncDisposableStack " +
    "ArrayBuffer SharedArrayBuffer DataView Atomics Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array " +
    "Int32Array Uint32Array Float16Array Float32Array Float64Array BigInt64Array BigUint64Array Iterator isNaN " +
    "isFinite parseInt parseFloat encodeURI decodeURI encodeURIComponent decodeURIComponent escape unescape " +
    "queueMicrotask structuredClone console performance DOMException atob btoa"
  ).split(" "),
);

/** The Swarm core plugin (src/swarm): its id, and its native tools. Only these qualify for the Swarm globals. */
export const SWARM_PLUGIN_ID = "swarm";
export const SESSIONS_SPAWN = "sessions_spawn";
export const AGENTS_WAIT = "agents_wait";
export const SWARM_TOOL_NAMES: ReadonlySet<string> = new Set([SESSIONS_SPAWN, AGENTS_WAIT]);
