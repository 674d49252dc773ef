import type { SessionStore } from "./types";

/** The outer call a tool's `ctx.store` serves, as far as taint goes. */
export type TaintScope = {
  /** The call's result already holds network-derived content (it read server metadata, an MCP result …). */
  untrusted(): boolean;
  /** It now may: it read tool data that such a call wrote (`source` names what it read). */
  taint(source: string): void;
};

/**
 * Tool data keeps the taint of the call that wrote it, so network-derived text cannot be
 * laundered through it: a cell that read server metadata writes it with a plugin tool, a later
 * cell reads it back, and that cell's result must still reach the model as untrusted.
 *
 * RULES
 * - A value written while its outer call is untrusted gets a mark under the same key in `marks`
 *   (tools never see that store; it is the session's storage too, so marks count in its quota
 *   like values). The mark is written first: a mark the quota refuses fails the write before the
 *   value is stored, so no value is ever stored unmarked by a tainted call.
 * - A value written by a trusted call replaces the data and its taint: the value first, then the
 *   mark goes (removing never grows the session; should it fail, the key stays marked — too
 *   much taint, never too little). Deleting a key deletes its mark the same way.
 * - Reading a marked key that holds a value (`get`), or listing rows one of which is marked
 *   (`list`), taints the reading outer call.
 */
export function taintedStore(values: SessionStore, marks: SessionStore, scope: TaintScope): SessionStore {
  const marked = async (key: string) => (await marks.get(key)) !== undefined;
  return {
    async get(key) {
      const value = await values.get(key);
      if (value !== undefined && (await marked(key))) scope.taint(`tool data "${key}"`);
      return value;
    },
    async put(key, value) {
      if (scope.untrusted()) {
        await marks.put(key, MARK);
        await values.put(key, value);
        return;
      }
      await values.put(key, value);
      if (await marked(key)) await marks.delete(key);
    },
    async delete(key) {
      const removed = await values.delete(key);
      if (await marked(key)) await marks.delete(key);
      return removed;
    },
    async list(prefix, limit) {
      const rows = await values.list(prefix, limit);
      for (const row of rows) {
        if (await marked(row.key)) {
          scope.taint(`tool data "${row.key}"`);
          break;
        }
      }
      return rows;
    },
  };
}

/** What a mark stores: its presence is the mark. */
const MARK = 1;
