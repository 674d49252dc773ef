import type { SessionStore } from "../../src/tools/types";

/** Tool-facing durable storage: the session object's key/value API under a `tool:` prefix. */
export function sessionKv(storage: DurableObjectStorage): SessionStore {
  const P = "tool:";
  return {
    get: (key) => storage.get(P + key),
    put: (key, value) => storage.put(P + key, value),
    delete: (key) => storage.delete(P + key),
    async list(prefix, limit) {
      const rows = await storage.list({ prefix: P + prefix, limit });
      return [...rows].map(([key, value]) => ({ key: key.slice(P.length), value }));
    },
  };
}
