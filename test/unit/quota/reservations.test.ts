import { describe, expect, it } from "vitest";
import { QuotaExceeded, quotaExceeded, Reservations } from "../../../src/quota";

describe("Reservations (room held for writes that finish a record)", () => {
  it("reserves only what the room allows after earlier reservations", () => {
    const pool = new Reservations();
    const a = pool.reserve(600, 1000);
    expect(a?.remaining).toBe(600);
    expect(pool.reserve(500, 1000)).toBeUndefined();
    expect(pool.reserve(400, 1000)?.remaining).toBe(400);
    expect(pool.total).toBe(1000);
    expect(pool.reserve(-1, 1000)).toBeUndefined();
  });

  it("a holder spends at most what it holds, and gives back the rest once", () => {
    const pool = new Reservations();
    const r = pool.reserve(300, 1000)!;
    expect(r.take(100)).toBe(100);
    expect(r.take(500)).toBe(200);
    expect(r.remaining).toBe(0);
    expect(pool.total).toBe(0);
    const s = pool.reserve(300, 1000)!;
    s.take(50);
    s.release();
    s.release();
    expect(s.remaining).toBe(0);
    expect(pool.total).toBe(0);
  });
});

describe("quotaExceeded (the refusal's shape)", () => {
  it("is a QuotaExceeded with code quota_exceeded naming the write, the total, the limit and how to free space", () => {
    const e = quotaExceeded("this transcript message", 120, 70_000, 65_536);
    expect(e).toBeInstanceOf(QuotaExceeded);
    expect(e.code).toBe("quota_exceeded");
    expect(e.message).toBe(
      "session storage is full: this transcript message (120 bytes) would bring the session to 70000 bytes, over gateway.sessions.maxStoredBytes (65536); " +
        "delete a turn (DELETE /v1/sessions/:sessionId/turns/:turnId) or the whole session (DELETE /v1/sessions/:sessionId) to free space",
    );
  });
});
