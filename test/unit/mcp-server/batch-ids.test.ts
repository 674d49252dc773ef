import { describe, expect, it } from "vitest";
import { repeatedRequestId } from "../../../src/mcp-server/batch-ids";

describe("repeatedRequestId", () => {
  const req = (id: unknown, method = "tools/call") => ({ jsonrpc: "2.0", id, method });

  it("names the first id two requests of a batch share", () => {
    expect(repeatedRequestId([req(1), req(2), req(1), req(2)])).toBe(1);
    expect(repeatedRequestId([req("a", "tools/list"), req("a")])).toBe("a");
  });

  it('none: a single message, distinct ids (1 and "1" differ), notifications, responses and invalid entries', () => {
    expect(repeatedRequestId(req(1))).toBeUndefined();
    expect(repeatedRequestId([req(1), req("1")])).toBeUndefined();
    expect(
      repeatedRequestId([
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", method: "notifications/initialized" },
      ]),
    ).toBeUndefined();
    expect(repeatedRequestId([{ jsonrpc: "2.0", id: 1, result: {} }, req(1)])).toBeUndefined();
    expect(repeatedRequestId([req(null), req(null), 7, null])).toBeUndefined();
  });
});
