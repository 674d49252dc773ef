import { describe, expect, it } from "vitest";
import { planTurn } from "../../durable-objects/session/turn-opening";
import { parseGatewayConfig } from "../../src/config";
import { demoPlugin } from "../../src/plugins/demo";
import { defineToolPlugin } from "../../src/tools";
import { checkSurface, type ModelTool } from "../../src/turns";

const ids = { turnId: "t", tenantId: "a", sessionId: "s", counterScope: "c", now: 0 };
const screen = defineToolPlugin({
  id: "screen",
  name: "Screen",
  description: "direct-only",
  tools: (tool) => [
    tool({ name: "computer", description: "a direct-only tool", parameters: { type: "object" }, directOnly: true, execute: async () => 1 }),
  ],
});

function plan(config: unknown, req: Parameters<typeof planTurn>[2] = {}) {
  const parsed = parseGatewayConfig(config);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return planTurn(parsed.config, [demoPlugin, screen], req, ids);
}

describe("the model-facing surface is checked before it is sent (fail closed)", () => {
  it("every surface the planner builds passes: code mode, direct, no tools, with client and direct-only tools", () => {
    const client = { clientTools: [{ name: "ask_user", parameters: { type: "object" } }] };
    for (const [config, req] of [
      [{ tools: { codeMode: true } }, client],
      [{ tools: { codeMode: false } }, client],
      [{ tools: { codeMode: true } }, { disableTools: true }],
      [{ tools: { codeMode: true } }, { allow: ["shipping_list", "computer"] }],
      [{ tools: { codeMode: "auto" } }, { model: "openai/gpt-5.6" }],
    ] as const) {
      const r = plan(config, req as never);
      expect(r.ok, JSON.stringify([config, req])).toBe(true);
    }
    const engaged = plan({ tools: { codeMode: true } });
    if (!engaged.ok) throw new Error("expected a surface");
    expect(engaged.tools.map((t) => t.name)).toEqual(["exec", "wait", "computer"]);
  });

  it("refuses a code-mode surface with a hidden tool, a missing control, or a duplicate", () => {
    const r = plan({ tools: { codeMode: true } });
    if (!r.ok) throw new Error("expected a surface");
    const { catalog } = r.spec;
    const tool = (name: string): ModelTool => ({ name, description: "", parameters: {} });
    expect(checkSurface([...r.tools, tool("shipping_list")], catalog, true)).toMatchObject({
      ok: false,
      message: expect.stringContaining("not direct-only: shipping_list"),
    });
    expect(
      checkSurface(
        r.tools.filter((t) => t.name !== "wait"),
        catalog,
        true,
      ),
    ).toMatchObject({ ok: false, message: expect.stringContaining("lacks wait") });
    expect(checkSurface([...r.tools, tool("exec")], catalog, true)).toMatchObject({ ok: false, message: expect.stringContaining("appears twice") });
    expect(checkSurface(r.tools, catalog, true)).toEqual({ ok: true });
  });

  it("refuses a direct surface holding a tool outside the turn's catalog (a control tool, or a denied one)", () => {
    const r = plan({ tools: { codeMode: false } }, { deny: ["notes_write"] });
    if (!r.ok) throw new Error("expected a surface");
    const tool = (name: string): ModelTool => ({ name, description: "", parameters: {} });
    expect(checkSurface(r.tools, r.spec.catalog, false)).toEqual({ ok: true });
    expect(checkSurface([...r.tools, tool("notes_write")], r.spec.catalog, false)).toMatchObject({ ok: false });
    expect(checkSurface([...r.tools, tool("exec")], r.spec.catalog, false)).toMatchObject({ ok: false });
  });
});
