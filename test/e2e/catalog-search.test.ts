import { describe, expect, it } from "vitest";
import { exec, expectHealthy, freshTurn, openTurn, sessionId } from "./helpers";

/**
 * Tool names the guest gets back for each query, through HTTP → session object → VM, as
 * [query, names] pairs (an object keyed by "__proto__" would lose that entry in the guest too).
 */
async function searchAll(session: string, turnId: string, queries: string[], limit = 8): Promise<Map<string, string[]>> {
  const r = await exec(
    session,
    turnId,
    `const out = [];
     for (const q of ${JSON.stringify(queries)}) out.push([q, (await catalog.search(q, { limit: ${limit} })).map((h) => h.toolName)]);
     return out;`,
  );
  expect(r.status).toBe("completed");
  return new Map(r.value);
}

const PROTOTYPE_WORDS = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

describe("catalog.search with Object.prototype member names (regression: catalog.search('constructor') failed the cell)", () => {
  it("as queries over the demo catalog: empty results, and the session stays healthy", async () => {
    const { session, turnId } = await freshTurn();
    const hits = await searchAll(session, turnId, PROTOTYPE_WORDS);
    expect([...hits.keys()]).toEqual(PROTOTYPE_WORDS);
    // No demo tool says "constructor" or "proto"; the camelCase parts of the others ("value" in
    // valueOf, "string" in toString) may match demo tools as ordinary words.
    expect(hits.get("constructor")).toEqual([]);
    expect(hits.get("__proto__")).toEqual([]);
    for (const found of hits.values()) expect(Array.isArray(found)).toBe(true);
    await expectHealthy(session, turnId);
  });

  it("as client tool names and description words: each is found by its word", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, {
      clientTools: [
        { name: "constructor", description: "Build a class instance through its constructor" },
        { name: "toString", description: "Render a value with toString" },
        { name: "hasOwnProperty", description: "Check hasOwnProperty on an object" },
        { name: "valueOf", description: "Unwrap a boxed primitive with valueOf" },
        { name: "__proto__", description: "Show the __proto__ chain of an object" },
      ],
    });
    const hits = await searchAll(session, turnId, PROTOTYPE_WORDS, 1);
    expect([...hits]).toEqual(PROTOTYPE_WORDS.map((word) => [word, [word]]));
  });
});

describe("catalog.search in any script (regression: non-Latin words were dropped)", () => {
  it("finds client tools described in Portuguese, Greek, Japanese and Russian by queries in those scripts", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, {
      clientTools: [
        { name: "vendas_relatorio", description: "Gera o relatório mensal de vendas por região" },
        { name: "minymata_apostoli", description: "Αποστολή μηνύματος σε πελάτη μέσω SMS" },
        { name: "seikyusho_sakusei", description: "顧客向けの請求書を作成します" },
        { name: "zakazy_spisok", description: "Показать список заказов клиента" },
      ],
    });
    const hits = await searchAll(session, turnId, ["relatorio de vendas", "ΑΠΟΣΤΟΛΗ ΜΗΝΥΜΑΤΟΣ", "請求書を作成", "список заказов"]);
    expect(hits.get("relatorio de vendas")![0]).toBe("vendas_relatorio");
    expect(hits.get("ΑΠΟΣΤΟΛΗ ΜΗΝΥΜΑΤΟΣ")).toEqual(["minymata_apostoli"]);
    expect(hits.get("請求書を作成")).toEqual(["seikyusho_sakusei"]);
    expect(hits.get("список заказов")).toEqual(["zakazy_spisok"]);
  });
});
