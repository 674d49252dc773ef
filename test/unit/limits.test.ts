import { describe, expect, it } from "vitest";
import {
  MAX_MCP_TOOLS_BYTES,
  MAX_STATE_BYTES,
  MAX_TURN_ROW_BYTES,
  SNAPSHOT_CHUNK_BYTES,
  SQLITE_MAX_ROW_BYTES,
  MAX_DECLARATION_TEXT_CHARS,
  MAX_DESCRIPTION_CHARS,
} from "../../src/limits";

describe("limits have one home", () => {
  it("every bounded row the gateway stores fits production's SQLite row cap", () => {
    for (const [name, bytes] of Object.entries({ SNAPSHOT_CHUNK_BYTES, MAX_STATE_BYTES, MAX_TURN_ROW_BYTES, MAX_MCP_TOOLS_BYTES }))
      expect(bytes, name).toBeLessThan(SQLITE_MAX_ROW_BYTES);
    // The MCP tools are stored inside the turn row.
    expect(MAX_MCP_TOOLS_BYTES).toBeLessThan(MAX_TURN_ROW_BYTES);
  });

  it("a .d.ts shows a shorter description than a client tool may declare (two limits, two names)", () => {
    expect(MAX_DECLARATION_TEXT_CHARS).toBe(1000);
    expect(MAX_DESCRIPTION_CHARS).toBe(4096);
  });
});
