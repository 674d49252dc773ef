import type { SessionStore } from "../../src/tools";
import { estimateStoredBytes, TOOL_PREFIX, type StorageQuota } from "./storage-quota";

/**
 * Tool-facing durable storage: the session object's key/value API under a `tool:` prefix.
 *
 * Tool data belongs to the session, not to the turn that wrote it: it outlives `DELETE` of a turn
 * and goes with `DELETE` of the session or the session's idle expiry. Writes count against the
 * session's `maxStoredBytes`; a write over the bound fails the tool call with a message naming it.
 * `prefix` names another such area (TAINT_PREFIX: the marks of tool data written by untrusted calls).
 */
export function sessionKv(storage: DurableObjectStorage, quota: StorageQuota, prefix: string = TOOL_PREFIX): SessionStore {
  const P = prefix;
  return {
    get: async (key) => storage.kv.get(P + key),
    put: async (key, value) => quota.charge(P + key, estimateStoredBytes(P + key, value), () => storage.kv.put(P + key, value)),
    delete: async (key) => quota.release(P + key, () => storage.kv.delete(P + key)),
    async list(prefix, limit) {
      const rows = storage.kv.list({ prefix: P + prefix, limit });
      return [...rows].map(([key, value]) => ({ key: key.slice(P.length), value }));
    },
  };
}
