import { describe, expect, it } from "vitest";
import { QuickJS } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../../wasm/quickjs";
import { GUEST_ABI_VERSION, GUEST_CONTROL, GUEST_PRELUDE, HOST_CALL, HOST_OP } from "../../../src/runtime";
import { DRIVABLE_GUEST_ABI, GuestVm } from "../../../src/runtime";
import { InterruptGuard } from "../../../src/runtime";

/**
 * Tripwire for the host ↔ guest ABI that parked runs depend on across deploys. If a test here
 * fails because the prelude or the bridge changed on purpose, bump GUEST_ABI_VERSION, keep the
 * host able to drive the old version (DRIVABLE_GUEST_ABI) for at least the maximum snapshot TTL,
 * and record the new version's surface below.
 */
const ABI_SURFACE: Record<number, { hostCall: string; ops: Record<string, number>; control: string[]; requests: string[] }> = {
  1: {
    hostCall: "__cm_host",
    ops: { request: 0, output: 1, cancel: 2 },
    control: ["start", "settle", "status", "value", "error", "installTools", "noteRejection", "noteHandled", "describeError"],
    requests: ["call", "describe", "search", "timer", "yield"],
  },
  // Native work metering: the guest announces built-in work before it runs (work-meter.ts).
  2: {
    hostCall: "__cm_host",
    ops: { request: 0, output: 1, cancel: 2, charge: 3 },
    control: ["start", "settle", "status", "value", "error", "installTools", "noteRejection", "noteHandled", "describeError"],
    requests: ["call", "describe", "search", "timer", "yield"],
  },
  // The tool_search_code guest (seed 004): a control method that swaps the globals for openclaw.tools.
  3: {
    hostCall: "__cm_host",
    ops: { request: 0, output: 1, cancel: 2, charge: 3 },
    control: ["start", "settle", "status", "value", "error", "installTools", "noteRejection", "noteHandled", "describeError", "installToolSearch"],
    requests: ["call", "describe", "search", "timer", "yield"],
  },
  // Taint reports: the guest says when it read network-written metadata from its own memory.
  4: {
    hostCall: "__cm_host",
    ops: { request: 0, output: 1, cancel: 2, charge: 3, taint: 4 },
    control: ["start", "settle", "status", "value", "error", "installTools", "noteRejection", "noteHandled", "describeError", "installToolSearch"],
    requests: ["call", "describe", "search", "timer", "yield"],
  },
  // Plugin namespaces: installTools' fourth argument; their calls are "call" requests keyed "ns:<Name>.<method>".
  5: {
    hostCall: "__cm_host",
    ops: { request: 0, output: 1, cancel: 2, charge: 3, taint: 4 },
    control: ["start", "settle", "status", "value", "error", "installTools", "noteRejection", "noteHandled", "describeError", "installToolSearch"],
    requests: ["call", "describe", "search", "timer", "yield"],
  },
  // Swarm: the fourth argument's "swarm" field (agents.run, phase, log); phase/log are "call" requests keyed "swarm:<name>".
  6: {
    hostCall: "__cm_host",
    ops: { request: 0, output: 1, cancel: 2, charge: 3, taint: 4 },
    control: ["start", "settle", "status", "value", "error", "installTools", "noteRejection", "noteHandled", "describeError", "installToolSearch"],
    requests: ["call", "describe", "search", "timer", "yield"],
  },
  // Per-VM Math.random seed: every cell VM is restored from one image, so the host seeds its generator.
  7: {
    hostCall: "__cm_host",
    ops: { request: 0, output: 1, cancel: 2, charge: 3, taint: 4 },
    control: [
      "start",
      "settle",
      "status",
      "value",
      "error",
      "installTools",
      "noteRejection",
      "noteHandled",
      "describeError",
      "installToolSearch",
      "seed",
    ],
    requests: ["call", "describe", "search", "timer", "yield"],
  },
};

describe("guest ABI", () => {
  it("the host drives the current version, and every version it drives has a recorded surface", () => {
    expect(DRIVABLE_GUEST_ABI).toContain(GUEST_ABI_VERSION);
    for (const v of DRIVABLE_GUEST_ABI) expect(ABI_SURFACE[v], `surface of ABI ${v}`).toBeDefined();
  });

  it("the prelude's host callback, op codes and control methods are those of GUEST_ABI_VERSION", async () => {
    const surface = ABI_SURFACE[GUEST_ABI_VERSION]!;
    expect(HOST_CALL).toBe(surface.hostCall);
    expect({ ...HOST_OP }).toEqual(surface.ops);
    const vm = await QuickJS.create({ wasm: QUICKJS_MODULE });
    try {
      const fn = vm.newFunction(HOST_CALL, () => vm.undefined);
      vm.setProp(vm.global, HOST_CALL, fn);
      fn.dispose();
      vm.evalCode(GUEST_PRELUDE).dispose();
      const keys = vm.evalCode(`Object.keys(globalThis.${GUEST_CONTROL}).join(",")`);
      expect(keys.toString().split(",")).toEqual(surface.control);
      keys.dispose();
    } finally {
      vm.dispose();
    }
  });

  it("the guest asks the host only for the request ops of GUEST_ABI_VERSION", async () => {
    const seen = new Set<string>();
    const host = {
      request(_id: number, op: string) {
        seen.add(op);
      },
      output() {},
      cancel() {},
    };
    const vm = await GuestVm.create({ memoryLimitBytes: 32 << 20 }, new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000), host);
    try {
      vm.installTools(JSON.stringify([{ name: "t", callableName: "t", description: "", parameters: {} }]));
      vm.start("const id = setTimeout(() => {}, 10); clearTimeout(id); t({}); t.describe(); catalog.search('x'); await yield_control(); return 1;");
      expect([...seen].sort()).toEqual(ABI_SURFACE[GUEST_ABI_VERSION]!.requests);
    } finally {
      vm.dispose();
    }
  });
});
