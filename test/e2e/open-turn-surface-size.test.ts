import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, sessionId } from "./helpers";

/**
 * The open-turn answer's `surface`: the model-visible tool definitions in bytes beside what the
 * same catalog exposed directly (code mode off) would cost, so a caller sees what code mode saves.
 */
const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
const TOOLS = [{ name: "ask", description: "asks the user", parameters: { type: "object", properties: { q: { type: "string" } } } }];

async function open(body: unknown) {
  const r = await api("POST", `/v1/sessions/${sessionId()}/turns`, body);
  expect(r.status).toBe(201);
  return r.json;
}

describe("the open-turn answer's surface size", () => {
  it("gives the code-mode surface's bytes and, as directBytes, exactly what a code-mode-off turn of the same catalog is sent", async () => {
    const coded = await open({ clientTools: TOOLS });
    const direct = await open({ agentId: "off", clientTools: TOOLS });
    expect(coded.codeModeEngaged).toBe(true);
    expect(direct.codeModeEngaged).toBe(false);
    expect(coded.surface.bytes).toBe(bytes(coded.tools));
    expect(direct.surface.bytes).toBe(bytes(direct.tools));
    // The same catalog (same plugins, client tools and policy): the direct figure is the off turn's real surface.
    expect(coded.surface.directBytes).toBe(direct.surface.bytes);
    expect(direct.surface.directBytes).toBe(direct.surface.bytes);
    expect(direct.tools.map((t: { name: string }) => t.name)).toContain("ask");
  });

  it("a long client tool description costs direct exposure its bytes but not the code-mode surface (no descriptions in the quick index)", async () => {
    const plain = await open({ clientTools: TOOLS });
    const long = "Looks things up. ".repeat(200);
    const described = await open({ clientTools: [{ ...TOOLS[0], description: long }] });
    expect(described.surface.directBytes - plain.surface.directBytes).toBeGreaterThanOrEqual(long.length - "asks the user".length);
    expect(described.surface.bytes).toBe(plain.surface.bytes);
  });

  it("a Tool Search turn reports the same bytes as its telemetry surface; a turn without tools sends nothing and would send nothing", async () => {
    const search = await open({ agentId: "search", clientTools: TOOLS });
    expect(search.toolSearchEngaged).toBe(true);
    expect(search.surface.bytes).toBe(search.telemetry.surface.bytes);
    expect(search.surface.directBytes).toBe((await open({ agentId: "off", clientTools: TOOLS })).surface.bytes);
    const none = await open({ disableTools: true });
    expect(none.tools).toEqual([]);
    expect(none.surface).toEqual({ bytes: 2, directBytes: 2 });
  });
});

describe("the document", () => {
  it("documents surface as a required field of OpenTurnAnswer with bytes and directBytes", async () => {
    const doc = (await (await SELF.fetch("http://gateway/openapi.json")).json()) as any;
    const schema = doc.components.schemas.OpenTurnAnswer;
    expect(schema.required).toContain("surface");
    expect(schema.properties.surface.required).toEqual(["bytes", "directBytes"]);
  });
});
