import { describe, expect, it } from "vitest";
import { exec, freshTurn } from "./helpers";

// Every cell runs in a VM prepared for it alone (the isolate's pool keeps one warm spare, never a
// used VM): what a cell leaves behind is gone for the next cell, of its own turn or of another session.
describe("each cell starts in a pristine VM", () => {
  const LEAVE =
    "globalThis.leftBehind = 'secret'; Object.prototype.polluted = 1; Array.prototype.push = () => 0; JSON.stringify = () => 'x'; return 'left'";
  const LOOK = "const a = []; a.push(1); return { left: typeof leftBehind, polluted: ({}).polluted, push: a.length, json: JSON.stringify({ k: 1 }) }";
  const PRISTINE = { left: "undefined", push: 1, json: '{"k":1}' };

  it("globals and built-ins changed by a cell are pristine in the next cell of the same turn", async () => {
    const { session, turnId } = await freshTurn();
    expect(await exec(session, turnId, LEAVE)).toMatchObject({ status: "completed", value: "left" });
    const next = await exec(session, turnId, LOOK);
    expect(next).toMatchObject({ status: "completed", value: PRISTINE });
    expect(next.value).not.toHaveProperty("polluted");
  });

  it("globals and built-ins changed by a cell are pristine in another session's next cell", async () => {
    const a = await freshTurn();
    const b = await freshTurn();
    expect(await exec(a.session, a.turnId, LEAVE)).toMatchObject({ status: "completed", value: "left" });
    const other = await exec(b.session, b.turnId, LOOK);
    expect(other).toMatchObject({ status: "completed", value: PRISTINE });
    expect(other.value).not.toHaveProperty("polluted");
  });

  it("a cell collects its garbage: churning many times its memory limit completes", async () => {
    // `tight` runs cells with 8 MiB; this allocates ~64 MiB of short-lived strings and arrays.
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(
      session,
      turnId,
      "let kept = 0; for (let i = 0; i < 2048; i++) { const junk = new Array(256).fill('x'.repeat(64) + i); kept += junk.length; } return kept",
    );
    expect(r).toMatchObject({ status: "completed", value: 2048 * 256 });
  });
});
