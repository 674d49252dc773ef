import { describe, expect, inject, it } from "vitest";
import { api, sessionId } from "./helpers";

/**
 * What a turn derives from its catalog (guest tool tables, MCP namespace and `.d.ts` files) is kept
 * per isolate by content and reused by later turns with the same catalog: a turn whose catalog or
 * policy differs must never get another turn's derivations.
 */
const everything = { everything: { url: inject("mcpEverythingUrl") } };

async function openTurn(session: string, body: Record<string, unknown>) {
  const r = await api("POST", `/v1/sessions/${session}/turns`, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json.turnId as string;
}

const LOOK = `
  const dts = await API.read("mcp/everything.d.ts");
  return { declaresEcho: dts.includes("function echo("), echo: typeof MCP.everything.echo, sum: typeof MCP.everything.getSum };
`;

async function look(session: string, turnId: string) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: LOOK });
  expect(r.status).toBe(200);
  expect(r.json.status, JSON.stringify(r.json)).toBe("completed");
  return r.json.value;
}

describe("turn derivations shared by content", () => {
  it("a turn whose policy hides an MCP tool never sees the declarations of a turn with the same server that shows it, nor the reverse", async () => {
    const shown = { declaresEcho: true, echo: "function", sum: "function" };
    const hidden = { declaresEcho: false, echo: "undefined", sum: "function" };
    const a = sessionId();
    const full = await openTurn(a, { mcpServers: everything });
    expect(await look(a, full)).toEqual(shown);
    const denied = await openTurn(a, { mcpServers: everything, deny: ["everything__echo"] });
    expect(await look(a, denied)).toEqual(hidden);
    // Another session, same catalog as the first turn: the same declarations; the first turn is unchanged.
    const b = sessionId();
    const again = await openTurn(b, { mcpServers: everything });
    expect(await look(b, again)).toEqual(shown);
    expect(await look(a, full)).toEqual(shown);
    const deniedElsewhere = await openTurn(b, { mcpServers: everything, deny: ["everything__echo"] });
    expect(await look(b, deniedElsewhere)).toEqual(hidden);
    expect(await look(a, denied)).toEqual(hidden);
  });

  it("an MCP call from a turn that reuses another turn's declarations reaches the server", async () => {
    const a = sessionId();
    const b = sessionId();
    const first = await openTurn(a, { mcpServers: everything });
    const second = await openTurn(b, { mcpServers: everything });
    for (const [session, turnId] of [
      [a, first],
      [b, second],
    ] as const) {
      const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
        code: `return await MCP.everything.echo({ message: ${JSON.stringify(session)} })`,
      });
      expect(r.json).toMatchObject({ status: "completed", value: { content: [{ type: "text", text: `Echo: ${session}` }] } });
    }
  });
});
