import { describe, expect, it } from "vitest";
import { AlarmSchedule } from "../../../../durable-objects/session/alarm-schedule";

/** The three alarm methods of a Durable Object's storage, over one stored time, counting reads and writes. */
function storage(initial: number | null = null) {
  const s = {
    alarm: initial,
    reads: 0,
    writes: 0,
    failNextWrite: false,
    async getAlarm() {
      s.reads++;
      return s.alarm;
    },
    async setAlarm(at: number | Date) {
      if (s.failNextWrite) {
        s.failNextWrite = false;
        throw new Error("storage refused the write");
      }
      s.writes++;
      s.alarm = Number(at);
    },
    async deleteAlarm() {
      s.writes++;
      s.alarm = null;
    },
  };
  return s;
}

describe("AlarmSchedule: the session's one alarm, the earliest asked for", () => {
  it("reads the stored alarm once, then keeps the earliest of what it is asked without reading again", async () => {
    const s = storage(5_000);
    const alarms = new AlarmSchedule(s);
    await alarms.arm(9_000);
    expect(s).toMatchObject({ alarm: 5_000, reads: 1, writes: 0 });
    await alarms.arm(3_000);
    await alarms.arm(4_000);
    expect(s).toMatchObject({ alarm: 3_000, reads: 1, writes: 1 });
  });

  it("a session that stored nothing has no alarm: its first one is written without a read", async () => {
    const s = storage();
    const alarms = new AlarmSchedule(s);
    alarms.assumeNone();
    await alarms.arm(7_000);
    expect(s).toMatchObject({ alarm: 7_000, reads: 0, writes: 1 });
  });

  it("arms asked for together are written in order: a later, later deadline never replaces an earlier one", async () => {
    const s = storage();
    const alarms = new AlarmSchedule(s);
    await Promise.all([alarms.arm(2_000), alarms.arm(8_000), alarms.arm(1_000), alarms.arm(6_000)]);
    await alarms.settled();
    expect(s.alarm).toBe(1_000);
  });

  it("after it fired, the stored time is read again (the platform cleared it, or keeps it for a retry)", async () => {
    const s = storage();
    const alarms = new AlarmSchedule(s);
    await alarms.arm(1_000);
    s.alarm = null; // the platform ran it
    alarms.fired();
    await alarms.arm(9_000);
    expect(s).toMatchObject({ alarm: 9_000, reads: 2 });
  });

  it("a refused write rejects its caller and is not taken as set: the next arm reads and writes again", async () => {
    const s = storage();
    const alarms = new AlarmSchedule(s);
    alarms.assumeNone();
    s.failNextWrite = true;
    await expect(alarms.arm(4_000)).rejects.toThrow("storage refused the write");
    expect(s.alarm).toBeNull();
    await alarms.arm(5_000);
    expect(s).toMatchObject({ alarm: 5_000, reads: 1 });
  });

  it("clear deletes the alarm at once; an arm asked for before it is not written after it", async () => {
    const s = storage(3_000);
    const alarms = new AlarmSchedule(s);
    const before = alarms.arm(1_000); // queued behind the read of the stored time
    const cleared = alarms.clear();
    expect(s.alarm).toBeNull();
    await Promise.all([before, cleared]);
    expect(s.alarm).toBeNull();
  });

  it("a wipe while an arm is reading or writing keeps nothing of it: the next session's first arm is written", async () => {
    for (const during of ["read", "write"] as const) {
      const s = storage(during === "read" ? 3_000 : null);
      const alarms = new AlarmSchedule(s);
      if (during === "write") alarms.assumeNone();
      const inFlight = alarms.arm(1_000);
      await Promise.resolve(); // the arm's read (or write) is under way
      await Promise.all([alarms.clear(), inFlight]);
      expect(s.alarm).toBeNull();
      await alarms.arm(60_000);
      expect(s.alarm).toBe(60_000);
    }
  });

  it("an alarm that fires while an arm reads the stored time: the arm writes its own", async () => {
    const s = storage(2_000);
    const alarms = new AlarmSchedule(s);
    const inFlight = alarms.arm(9_000);
    await Promise.resolve();
    s.alarm = null; // the platform ran it
    alarms.fired();
    await inFlight;
    expect(s.alarm).toBe(9_000);
  });

  it("clear deletes the alarm, and the next arm writes whatever time it is given", async () => {
    const s = storage();
    const alarms = new AlarmSchedule(s);
    await alarms.arm(1_000);
    await alarms.clear();
    expect(s.alarm).toBeNull();
    await alarms.arm(50_000);
    expect(s.alarm).toBe(50_000);
  });
});
