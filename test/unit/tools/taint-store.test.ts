import { describe, expect, it } from "vitest";
import { taintedStore, type SessionStore } from "../../../src/tools";

/** An in-memory store; `full` refuses every write that grows it, like the session's quota. */
function memoryStore(): SessionStore & { data: Map<string, unknown>; full: boolean } {
  const data = new Map<string, unknown>();
  const store = {
    data,
    full: false,
    get: async (key: string) => data.get(key),
    put: async (key: string, value: unknown) => {
      if (store.full) throw new Error("quota_exceeded");
      data.set(key, value);
    },
    delete: async (key: string) => data.delete(key),
    list: async (prefix: string, limit: number) =>
      [...data]
        .filter(([k]) => k.startsWith(prefix))
        .slice(0, limit)
        .map(([key, value]) => ({ key, value })),
  };
  return store;
}

/** One outer call: untrusted or not, and what tainted it. */
function call(untrusted: boolean) {
  const scope = { untrusted, sources: [] as string[] };
  return { scope, taint: { untrusted: () => scope.untrusted, taint: (s: string) => void (scope.sources.push(s), (scope.untrusted = true)) } };
}

describe("taintedStore: tool data keeps the taint of the call that wrote it", () => {
  it("a value written by an untrusted call is marked; reading it back taints the reading call", async () => {
    const values = memoryStore();
    const marks = memoryStore();
    const writer = call(true);
    await taintedStore(values, marks, writer.taint).put("notes:k", "server text");
    expect(values.data.get("notes:k")).toBe("server text");
    expect(marks.data.has("notes:k")).toBe(true);

    const reader = call(false);
    expect(await taintedStore(values, marks, reader.taint).get("notes:k")).toBe("server text");
    expect(reader.scope.untrusted).toBe(true);
    expect(reader.scope.sources).toEqual(['tool data "notes:k"']);
  });

  it("listing rows one of which is marked taints the call; a listing of unmarked rows does not", async () => {
    const values = memoryStore();
    const marks = memoryStore();
    await taintedStore(values, marks, call(false).taint).put("notes:a", "mine");
    await taintedStore(values, marks, call(true).taint).put("notes:b", "theirs");
    const clean = call(false);
    expect(await taintedStore(values, marks, clean.taint).list("notes:a", 10)).toEqual([{ key: "notes:a", value: "mine" }]);
    expect(clean.scope.untrusted).toBe(false);
    const all = call(false);
    expect(await taintedStore(values, marks, all.taint).list("notes:", 10)).toHaveLength(2);
    expect(all.scope.untrusted).toBe(true);
  });

  it("a value written by a trusted call is trusted: it replaces the data and its mark", async () => {
    const values = memoryStore();
    const marks = memoryStore();
    await taintedStore(values, marks, call(true).taint).put("k", "server text");
    await taintedStore(values, marks, call(false).taint).put("k", "my own text");
    expect(marks.data.size).toBe(0);
    const reader = call(false);
    await taintedStore(values, marks, reader.taint).get("k");
    expect(reader.scope.untrusted).toBe(false);
  });

  it("a call that became untrusted during its run (it read marked data) marks what it writes after", async () => {
    const values = memoryStore();
    const marks = memoryStore();
    await taintedStore(values, marks, call(true).taint).put("a", "server text");
    const copier = call(false);
    const store = taintedStore(values, marks, copier.taint);
    await store.put("b", String(await store.get("a")));
    expect(marks.data.has("b")).toBe(true);
  });

  it("deleting a key deletes its mark; reading a key with no value taints nothing", async () => {
    const values = memoryStore();
    const marks = memoryStore();
    await taintedStore(values, marks, call(true).taint).put("k", "server text");
    expect(await taintedStore(values, marks, call(false).taint).delete("k")).toBe(true);
    expect(marks.data.size).toBe(0);
    const reader = call(false);
    expect(await taintedStore(values, marks, reader.taint).get("k")).toBeUndefined();
    expect(reader.scope.untrusted).toBe(false);
  });

  it("a mark the quota refuses fails the write before the value is stored: never an unmarked value from a tainted call", async () => {
    const values = memoryStore();
    const marks = memoryStore();
    marks.full = true;
    await expect(taintedStore(values, marks, call(true).taint).put("k", "server text")).rejects.toThrow("quota_exceeded");
    expect(values.data.has("k")).toBe(false);
  });

  it("a value the quota refuses after its mark leaves the key marked (too much taint, never too little)", async () => {
    const values = memoryStore();
    const marks = memoryStore();
    await taintedStore(values, marks, call(false).taint).put("k", "mine");
    values.full = true;
    await expect(taintedStore(values, marks, call(true).taint).put("k", "server text")).rejects.toThrow("quota_exceeded");
    expect(values.data.get("k")).toBe("mine");
    const reader = call(false);
    await taintedStore(values, marks, reader.taint).get("k");
    expect(reader.scope.untrusted).toBe(true);
  });
});
