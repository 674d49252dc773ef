import { describe, expect, it } from "vitest";
import { api, exec, freshTurn } from "./helpers";

describe("exec through HTTP → Durable Object → VM", () => {
  it("returns 1 + 2 as a completed result with telemetry", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "return 1 + 2");
    expect(r.status).toBe("completed");
    expect(r.value).toBe(3);
    expect(r.telemetry.controlTools).toEqual(["exec", "wait"]);
  });

  it("calls the demo shipping_list tool and composes in one cell", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const shipments = await shipping_list({});
       return shipments.filter((s) => !s.paid && s.tons > 10).map((s) => s.id);`,
    );
    expect(r).toMatchObject({ status: "completed", value: ["SH-1002", "SH-1005"] });
    expect(r.telemetry.counters.call).toBe(1);
  });

  it("text and json produce ordered output", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, `text("a"); json({b: 2}); text(3); return "done"`);
    expect(r.output).toEqual([
      { type: "text", text: "a" },
      { type: "json", value: { b: 2 } },
      { type: "text", text: "3" },
    ]);
  });

  it("console.log writes text output items (objects as JSON), like text()", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, `console.log("a", 1, { b: 2 }); console.error("oops"); return typeof console.log`);
    expect(r.output).toEqual([
      { type: "text", text: 'a 1 {"b":2}' },
      { type: "text", text: "oops" },
    ]);
    expect(r.value).toBe("function");
  });

  it("healthz", async () => {
    const r = await api("GET", "/healthz", undefined, null);
    expect(r.json).toMatchObject({ ok: true, runtime: "quickjs-wasi" });
  });
});
