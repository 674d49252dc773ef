import { describe, expect, it } from "vitest";
import { decodedTurn, encodeTurn } from "../../../src/session/turn-row";
import type { TurnSpec } from "../../../src/turns";

const catalog = {
  entries: [
    { toolName: "crm.company_list", source: "openclaw", origin: "core", description: "lists\u2028companies", inputSchema: { type: "object" } },
  ],
  direct: [],
};

function spec(turnId: string, extra: Record<string, unknown> = {}): TurnSpec {
  return { turnId, tenantId: "t", createdAt: 1, gone: undefined, when: new Date(0), ...extra, catalog } as unknown as TurnSpec;
}

describe("a turn kept parsed as its row would be read back", () => {
  it("equals JSON.parse of the stored row, key order included, for fields JSON drops or changes", () => {
    const s = spec("a", { surface: { allow: ["x__*"], nested: { n: [1, null] } } });
    const row = encodeTurn(s, { search: 0, describe: 0, call: 0 });
    const decoded = decodedTurn(s, row);
    expect(JSON.stringify(decoded.spec)).toBe(row.spec);
    expect(decoded.spec).toStrictEqual(JSON.parse(row.spec));
    expect(decoded.counters).toStrictEqual(JSON.parse(row.counters));
    expect("gone" in decoded.spec).toBe(false);
  });

  it("parses a catalog shared by turns opened alike once, apart from the spec object it came from", () => {
    const counters = { search: 0, describe: 0, call: 0 };
    const a = decodedTurn(spec("a"), encodeTurn(spec("a"), counters));
    const b = decodedTurn(spec("b"), encodeTurn(spec("b"), counters));
    expect(a.spec.catalog).toBe(b.spec.catalog);
    expect(a.spec.catalog).not.toBe(catalog);
    expect(a.spec.turnId).toBe("a");
    expect(b.spec.turnId).toBe("b");
    expect(a.counters).not.toBe(b.counters);
  });
});
