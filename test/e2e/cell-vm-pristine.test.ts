import { describe, expect, it } from "vitest";
import { exec, freshTurn, wait } from "./helpers";

// Every cell runs in a VM of its own: the isolate's pool hands out warm spares, and a VM a cell is
// done with comes back reset to the pristine image (its whole memory overwritten, its host-side state
// renewed). What a cell leaves behind is gone for the next cell, of its own turn or of another session,
// however the cell ended.
describe("each cell starts in a pristine VM", () => {
  const LEAVE =
    "globalThis.leftBehind = 'secret'; Object.prototype.polluted = 1; Array.prototype.push = () => 0; JSON.stringify = () => 'x'; return 'left'";
  const LOOK =
    "const a = []; a.push(1); return { left: typeof leftBehind, rows: typeof rows, polluted: ({}).polluted, push: a.length, json: JSON.stringify({ k: 1 }) }";
  const PRISTINE = { left: "undefined", rows: "undefined", push: 1, json: '{"k":1}' };

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

  it("a cell that failed, one that parked and one stopped at its deadline leave nothing for other sessions' cells", async () => {
    // Built-ins left intact here: the parked cell's own host calls still use them.
    const leave = "globalThis.leftBehind = 'secret'; Object.prototype.polluted = 1";
    const endings = [
      { code: `${leave}; throw new Error('failed on purpose')`, status: "failed" },
      { code: `${leave}; await yield_control(); return 1`, status: "waiting" },
      { code: `${leave}; for (;;) {}`, status: "failed" },
      // Grows its VM past the image: dropped, not reused (its memory cannot shrink back).
      { code: `${leave}; globalThis.rows = []; for (let i = 0; i < 30000; i++) rows.push('secret-' + i); return rows.length`, status: "completed" },
    ];
    for (const ending of endings) {
      // `fast`: a 400 ms cell budget, so the loop stops and the timer parks soon.
      const a = await freshTurn({ agentId: "fast" });
      const b = await freshTurn();
      const ended = await exec(a.session, a.turnId, ending.code);
      expect(ended, JSON.stringify(ended)).toMatchObject({ status: ending.status });
      for (let i = 0; i < 3; i++) {
        const other = await exec(b.session, b.turnId, LOOK);
        expect(other).toMatchObject({ status: "completed", value: PRISTINE });
        expect(other.value).not.toHaveProperty("polluted");
      }
    }
  });

  it("a run resumed by wait comes back reset too: its variables never reach another session's cells", async () => {
    const a = await freshTurn();
    const b = await freshTurn();
    const parked = await exec(
      a.session,
      a.turnId,
      "globalThis.leftBehind = 'secret'; Object.prototype.polluted = 1; await yield_control(); return leftBehind",
    );
    expect(parked).toMatchObject({ status: "waiting" });
    expect(await wait(a.session, a.turnId, parked.runId)).toMatchObject({ status: "completed", value: "secret" });
    for (let i = 0; i < 3; i++) {
      const other = await exec(b.session, b.turnId, LOOK);
      expect(other).toMatchObject({ status: "completed", value: PRISTINE });
      expect(other.value).not.toHaveProperty("polluted");
    }
  });

  // Every cell VM is restored from the same image: its Math.random is seeded per VM by the host.
  const DRAW = "return [Math.random(), Math.random(), Math.random()]";

  it("consecutive cells of one turn draw different Math.random sequences", async () => {
    const { session, turnId } = await freshTurn();
    const first = await exec(session, turnId, DRAW);
    const second = await exec(session, turnId, DRAW);
    expect(first.status).toBe("completed");
    expect(second.status).toBe("completed");
    expect(second.value).not.toEqual(first.value);
    expect((first.value as number[])[0]).not.toBe((second.value as number[])[0]);
  });

  it("cells of different sessions draw different Math.random sequences", async () => {
    const a = await freshTurn();
    const b = await freshTurn();
    const fromA = await exec(a.session, a.turnId, DRAW);
    const fromB = await exec(b.session, b.turnId, DRAW);
    expect(fromA.status).toBe("completed");
    expect((fromB.value as number[])[0]).not.toBe((fromA.value as number[])[0]);
  });

  it("Math.random draws distinct values in [0, 1) spread over the interval", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "const xs = []; for (let i = 0; i < 2000; i++) xs.push(Math.random()); let sum = 0, low = 0; for (const x of xs) { sum += x; if (x < 0.5) low++; } return { inRange: xs.every((x) => x >= 0 && x < 1), distinct: new Set(xs).size, mean: sum / xs.length, low, fractional: xs.some((x) => x * 2 ** 32 % 1 !== 0) }",
    );
    expect(r.status).toBe("completed");
    const v = r.value as { inRange: boolean; distinct: number; mean: number; low: number; fractional: boolean };
    expect(v).toMatchObject({ inRange: true, distinct: 2000, fractional: true });
    expect(v.mean).toBeGreaterThan(0.45);
    expect(v.mean).toBeLessThan(0.55);
    expect(v.low).toBeGreaterThan(850);
    expect(v.low).toBeLessThan(1150);
  });

  it("a cell that replaces Math.random leaves the next cell's generator alone", async () => {
    const { session, turnId } = await freshTurn();
    expect(await exec(session, turnId, "Math.random = () => 0.25; return Math.random()")).toMatchObject({ status: "completed", value: 0.25 });
    const next = await exec(session, turnId, "return [Math.random(), Math.random()]");
    expect(next.status).toBe("completed");
    expect(next.value).not.toEqual([0.25, 0.25]);
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
