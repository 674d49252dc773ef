import { describe, expect, it } from "vitest";
import { planTurn } from "../../../src/turns";
import { parseGatewayConfig } from "../../../src/config";
import { demoPlugin } from "../../../src/plugins/demo";
import { countersCeiling, encodeTurn } from "../../../src/session/turn-row";

// Opening a turn with the inputs of an earlier one builds nothing again: the catalog (and its
// row encoding) is shared, and what a turn stores is byte for byte what it stored before.

const utf8 = new TextEncoder();
const parsed = parseGatewayConfig({ tools: { codeMode: true } });
if (!parsed.ok) throw new Error(parsed.error.message);
const config = parsed.config;
const plugins = [demoPlugin];
const listing = Array.from({ length: 30 }, (_, i) => ({ name: `tool_${i}`, description: `tool ${i} — ünïcødé`, inputSchema: { type: "object" } }));
const ids = (turnId: string) => ({ turnId, tenantId: "a", sessionId: "s", counterScope: `c-${turnId}`, now: 1 });
const mcp = (tools: typeof listing) => ({ servers: [], listed: [{ name: "srv", tools }] });

function open(turnId: string, req: Parameters<typeof planTurn>[2], tools = listing) {
  const r = planTurn(config, plugins, req, ids(turnId), { mcp: mcp(tools) });
  if (!r.ok) throw new Error(r.message);
  return r.spec;
}

describe("turn opening builds a catalog once per inputs", () => {
  it("two turns with the same plugins, listing, client tools and policy share one frozen catalog; their own fields differ", () => {
    const req = () => ({ clientTools: [{ name: "ask_user", parameters: { type: "object" } }], deny: ["srv__tool_3"] });
    const a = open("t1", req());
    const b = open("t2", req());
    expect(b.catalog).toBe(a.catalog);
    expect(Object.isFrozen(a.catalog.entries[0])).toBe(true);
    expect([a.turnId, b.turnId]).toEqual(["t1", "t2"]);
    expect(a.catalog.entries.some((e) => e.toolName === "srv__tool_3")).toBe(false);
  });

  it("a different policy, client tool or a listing fetched again builds a new catalog", () => {
    const base = open("t1", { deny: ["x"] });
    expect(open("t2", { deny: ["y"] }).catalog).not.toBe(base.catalog);
    expect(open("t3", { deny: ["x"], clientTools: [{ name: "ask_user" }] }).catalog).not.toBe(base.catalog);
    const refetched = listing.map((t) => ({ ...t }));
    const again = open("t4", { deny: ["x"] }, refetched);
    expect(again.catalog).not.toBe(base.catalog);
    expect(again.catalog).toEqual(base.catalog);
  });

  it("the stored row is the spec's JSON in any key order, with the bytes and charge of JSON.stringify(spec)", () => {
    const spec = open("t5", { clientTools: [{ name: "notes", description: "日本語 😀" }] });
    const counters = { search: 1, describe: 0, call: 2 };
    const row = encodeTurn(spec, counters);
    expect(JSON.parse(row.spec)).toEqual(JSON.parse(JSON.stringify(spec)));
    const specBytes = utf8.encode(JSON.stringify(spec)).length;
    const countersBytes = utf8.encode(JSON.stringify(counters)).length;
    expect(row.bytes).toBe(specBytes + countersBytes);
    expect(row.charged).toBe(specBytes + Math.max(countersBytes, countersCeiling(spec)));
    // A second turn sharing the catalog encodes the same way.
    const other = open("t6", { clientTools: [{ name: "notes", description: "日本語 😀" }] });
    expect(other.catalog).toBe(spec.catalog);
    expect(JSON.parse(encodeTurn(other, counters).spec)).toEqual(JSON.parse(JSON.stringify(other)));
  });
});
