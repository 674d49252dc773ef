/**
 * Fixed limits that are not configuration. Configurable limits (timeouts, memory, output,
 * snapshot size, TTL, pending calls) come from the resolved `tools.codeMode` options, and
 * session storage limits from `gateway.sessions`. Calibrations live beside what they
 * calibrate: the CPU budget in runtime/interrupt-guard.ts and runtime/work-meter.ts, the
 * isolate VM memory budget in runtime/memory-ledger.ts.
 */

/** Suspended cells and resumes in progress per session object (seed: 64 slots). */
export const MAX_SUSPENDED_RUNS = 64;

/** Snapshot chunk size: under SQLITE_MAX_ROW_BYTES. */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

/** Bodies over 1 MiB are refused with 413 before they are read whole. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Entries in a turn's `allow` / `deny` lists. */
export const MAX_LIST = 512;

/** Client tools one turn may declare. */
export const MAX_CLIENT_TOOLS = 1024;

/** A bearer token must be at least this long (and carry no whitespace, which the header cannot). */
export const MIN_TOKEN_CHARS = 8;

/** A client tool's description (it reaches the guest through `describe()` and search). */
export const MAX_DESCRIPTION_CHARS = 4096;

/** A description (or title) as the generated MCP `.d.ts` files show it, in code points; the rest is cut with an ellipsis. */
export const MAX_DECLARATION_TEXT_CHARS = 1000;

/**
 * Production SQLite-backed Durable Objects refuse a value (row, BLOB) over 2 MB (local workerd
 * allows more, so nothing may rely on it). Every stored row the gateway writes is bounded under it.
 */
export const SQLITE_MAX_ROW_BYTES = 2_000_000;

/**
 * Deepest nesting accepted in JSON that crosses from the guest (or a client) into the host.
 * Far deeper values parse fine but overflow the host's own recursive serialization (RPC,
 * responses), so they are refused where they enter rather than failing later as a 500.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Requests recorded while guest code runs are host memory the guest's own limits do not see:
 * one batch holds at most this many requests and `maxRequestBytes` in total.
 */
export const MAX_BATCH_REQUESTS = 2048;

/** Search queries beyond this are refused (a query is words, not a document). */
export const MAX_SEARCH_QUERY_CHARS = 1024;

/** Live guest timers per cell; past this `setTimeout` throws a RangeError. */
export const MAX_GUEST_TIMERS = 1000;

/** QuickJS's own stack guard must trip before workerd's native stack runs out. */
export const GUEST_MAX_STACK_BYTES = 256 * 1024;

/** Parked state is one SQLite row, under SQLITE_MAX_ROW_BYTES. */
export const MAX_STATE_BYTES = 1024 * 1024;

/** Requests larger than this never reach a tool (guest → host direction). */
export const MIN_REQUEST_BYTES = 1024 * 1024;

/** Client results remembered per turn (to answer a repeat with 409); the oldest are forgotten first. */
export const DELIVERED_CALLS_LIMIT = 4096;

/** Bounds on the quick index in the `exec` description (deterministic: catalog order). */
export const QUICK_INDEX_MAX_ENTRIES = 40;

/** Characters of the whole quick index. */
export const QUICK_INDEX_MAX_CHARS = 4000;

/** Hints are bounded so one tool cannot flood the quick index. */
export const MAX_HINT_CHARS = 240;

/**
 * Stored (redacted) cell source: an `exec` call's `code` / `command` over this many UTF-8 bytes is
 * stored "diagnostic masked", its leading part redacted plus a marker counting the omitted bytes.
 */
export const MAX_REDACTED_SOURCE_BYTES = 256 * 1024;

// --- Agent turns (/chat): src/agent, durable-objects/session/transcript-store.ts

/** Model round trips one `/chat` call may make unless the request asks for fewer (1..MAX). */
export const DEFAULT_ASSISTANT_TURNS = 16;
export const MAX_ASSISTANT_TURNS = 64;

/** Messages one `/chat` request may carry, and characters of one message. */
export const MAX_CHAT_MESSAGES = 256;
export const MAX_CHAT_MESSAGE_CHARS = 256 * 1024;

/** One model call (connect, stream, finish) must complete within this. */
export const PROVIDER_TIMEOUT_MS = 120_000;

/**
 * A token count a provider reports is clamped to this (2^53 − 1: past it a double no longer counts
 * in ones, and sums across calls would stop being exact). Turn totals saturate at it too.
 */
export const MAX_TOKEN_COUNT = Number.MAX_SAFE_INTEGER;

/**
 * A provider's `Retry-After` is passed on to the client clamped to this (one day): a longer wait is
 * no advice a client can act on, and a value from the provider must not become an absurd header.
 */
export const MAX_RETRY_AFTER_SECONDS = 86_400;

/**
 * A provider's own error text reaches the client at most this long (then `…[N more characters]`):
 * the client learns what went wrong, and a provider cannot make the gateway echo a large body.
 */
export const MAX_PROVIDER_MESSAGE_CHARS = 1_000;

/**
 * Model-facing `exec`/`wait`/direct results fit the model's per-result context (seed 002,
 * "Output API"): at most this share of its context window (at ~4 UTF-8 bytes a token), and never
 * more than the persistence cap. Network-derived results keep the smaller untrusted cap.
 */
export const RESULT_CONTEXT_SHARE = 0.3;
export const BYTES_PER_TOKEN = 4;
export const MAX_PERSISTED_RESULT_BYTES = 400_000;
export const MAX_UNTRUSTED_RESULT_BYTES = 100_000;

/** A turn's stored transcript (messages) and trajectory (events) are bounded; past that the loop stops / events are counted only. */
export const MAX_TRANSCRIPT_BYTES = 2 * 1024 * 1024;
export const MAX_TRAJECTORY_EVENTS = 2000;

/** Display-only previews of a nested call's input and result in the trajectory. */
export const NESTED_PREVIEW_BYTES = 2048;

/** Bytes of one model call's answer the gateway reads (a stream's every event included); past it the call fails. */
export const MAX_PROVIDER_RESPONSE_BYTES = 32 * 1024 * 1024;
/** Bytes of a provider's error answer (status 400 or more) the gateway reads. */
export const MAX_PROVIDER_ERROR_BODY_BYTES = 64 * 1024;

// --- MCP servers: src/mcp, src/turns/turn-opening.ts

/**
 * Bytes of one MCP server's HTTP answer the gateway reads (`initialize`, each `tools/list` page,
 * `tools/call`, `resources/*`, `prompts/*`; a server-sent stream counts whole): past it the
 * operation fails naming the bound. Far under the isolate's 128 MB, which the parsed answer
 * takes several times over.
 */
export const MAX_MCP_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * A turn stores its MCP tools (names, descriptions, schemas as JSON) with the turn, in one SQLite
 * row (under SQLITE_MAX_ROW_BYTES): their JSON is bounded per turn, servers counted in config
 * order (gateway servers, then the turn's). A server whose tools would pass the bound is attached
 * without tools and reported.
 */
export const MAX_MCP_TOOLS_BYTES = 1024 * 1024;

/**
 * A turn's stored row (spec and counters: every tool of its catalog) is at most this: comfortably
 * under SQLITE_MAX_ROW_BYTES, so a turn too large to store is refused with a clear
 * answer before the write, not by the database.
 */
export const MAX_TURN_ROW_BYTES = 1536 * 1024;
