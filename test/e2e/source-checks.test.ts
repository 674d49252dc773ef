import { describe, expect, it } from "vitest";
import { frozenClock } from "../../src/runtime";
import { ORDINARY_CELLS, REFUSED_CELLS } from "../source-corpus";
import { exec, expectHealthy, freshTurn } from "./helpers";
import { setClock } from "./session-controls";

// Item 10 through HTTP → Durable Object → VM: ordinary code runs, module access and shell
// commands are refused before the guest runs. A frozen clock keeps the first TypeScript cell's
// compiler start (seconds in the test runner, which ships the compiler over a socket) on its
// estimate, as in production.
describe("source checks through the whole path", () => {
  it.each(ORDINARY_CELLS.map((c) => [`${c.language}: ${c.name}`, c] as const))(
    "runs %s",
    async (_name, cell) => {
      const { session, turnId } = await freshTurn();
      setClock(frozenClock());
      const r = await exec(session, turnId, cell.code, { language: cell.language });
      expect(r).toMatchObject({ status: "completed", value: cell.value });
    },
    120_000,
  );

  it.each(REFUSED_CELLS.map((c) => [`${c.language}: ${c.name}`, c] as const))("refuses %s", async (_name, cell) => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, cell.code, { language: cell.language });
    expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(r.error).toContain(cell.mentions);
    expect(r.error).toContain(cell.kind === "shell" ? "looks like a shell command" : "Module access is not available in code mode");
    await expectHealthy(session, turnId);
  });
});
