import { afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";
import type { QuickJS, Snapshot } from "quickjs-wasi";
import { GuestVm, pristineVm, type VmImage } from "../../src/runtime";
import { decodeSnapshot } from "../../src/snapshot-store";
import { exec, openTurn, sessionId, sessionProbe, sleep, TOKEN_A, TOKEN_B, wait } from "./helpers";
import { expectOnlyIdleHeld } from "./session-controls";

// A used VM instance is reset in place before another session's cell gets it: the image's zero
// pages (the 1 MiB stack region) are written as a fill and only the other pages copied, from page
// runs found once per image. Tenant A's cells work the C stack as hard as a cell can (recursion to
// the stack limit, huge frames, regex/JSON/sort/number formatting) and park mid-stack; tenant B's
// cells then run, and park, in the same instance. Every reset must give exactly the image's bytes and
// stack pointer, and nothing of A may reach B's cells or B's stored snapshot.

/** Tenant A's marker, only ever assembled at run time (the cell's source never holds it whole). */
const MARK_A = "QZXSECRETA7";
const MARK_B = "QZXSECRETB9";
/** A number whose decimal digits the engine formats on the C stack (dtoa) at every recursion depth. */
const DIGITS = "7391000048251234";

/**
 * Works the C stack as far as a cell can without growing its memory past the image (a grown instance is
 * dropped, never reset): recursion to the stack limit (caught), a 2,000-argument frame, nested JSON, regex, sort with a comparator, string ops. */
const stackAttack = (tenant: "A7" | "B9") => `
  const M = ['QZX', 'SECRET', '${tenant}'].join('');
  const N = 73910000 * 100000000 + 48251234;
  let depth = 0;
  function deep(n) { depth = n; const s = String(N) + M + n; return deep(n + 1) + s.length; }
  let overflow = '';
  try { deep(0); } catch (e) { overflow = e instanceof RangeError ? 'range' : String(e); }
  const args = Array.from({ length: 2000 }, (_, i) => N + i);
  const wide = (...xs) => xs.length;
  const spread = wide(...args) + Math.max.apply(null, args) - N;
  let nested = 0;
  try { nested = JSON.parse('['.repeat(500) + JSON.stringify(M) + ']'.repeat(500)).length; } catch (e) { nested = -1; }
  const re = new RegExp('^(?:' + M + '(\\\\d))*$').test((M + '1').repeat(300));
  args.sort((a, b) => b - a);
  const text = M.repeat(50).replace(/S(E)C/g, (m, e) => e + String(N)).normalize('NFD').padStart(3000, M);
  return { overflow, deep: depth > 100, spread, nested, re, sorted: args[0] === N + 1999, text: text.length };`;

const STACK_RESULT = { overflow: "range", deep: true, spread: 2000 + 1999, nested: 1, re: true, sorted: true };

/** Bytes of `needle` (ASCII) inside `haystack`. */
function contains(haystack: Uint8Array, needle: string): boolean {
  const n = new TextEncoder().encode(needle);
  outer: for (let i = haystack.indexOf(n[0]!); i >= 0 && i + n.length <= haystack.length; i = haystack.indexOf(n[0]!, i + 1)) {
    for (let k = 1; k < n.length; k++) if (haystack[i + k] !== n[k]) continue outer;
    return true;
  }
  return false;
}

type VmState = { memory: Uint8Array; stackPointer: number };

function stateOf(vm: QuickJS): VmState {
  const exports = vm._getExports() as unknown as { __stack_pointer: WebAssembly.Global };
  return { memory: new Uint8Array(vm._getMemory().buffer).slice(), stackPointer: exports.__stack_pointer.value as number };
}

/** Where `state` differs from a fresh restore of `image` (its bytes, zeros past them, its stack pointer), or null. */
function differenceFrom(image: Snapshot, state: VmState): string | null {
  if (state.stackPointer !== image.stackPointer) return `stack pointer ${state.stackPointer} != ${image.stackPointer}`;
  const want = Math.ceil(image.memory.length / 65536) * 65536;
  if (state.memory.length !== want) return `memory ${state.memory.length} bytes, want ${want}`;
  for (let i = 0; i < image.memory.length; i++) if (state.memory[i] !== image.memory[i]) return `byte ${i} (page ${i >> 12})`;
  for (let i = image.memory.length; i < state.memory.length; i++) if (state.memory[i] !== 0) return `byte ${i} past the image`;
  return null;
}

/** Pages that are zero in `image` and not in `memory` (what the reset writes as a fill). */
function dirtiedZeroPages(image: Uint8Array, memory: Uint8Array): number {
  let dirtied = 0;
  for (let start = 0; start < image.length; start += 4096) {
    const end = Math.min(image.length, start + 4096);
    let zero = true;
    for (let i = start; i < end && zero; i++) zero = image[i] === 0;
    if (!zero) continue;
    for (let i = start; i < end; i++)
      if (memory[i] !== 0) {
        dirtied++;
        break;
      }
  }
  return dirtied;
}

/** One in-place reset seen: what the instance held before (a marker, image-zero pages written) and how it came out. */
type Reset = { instance: object; image: Snapshot; setup: boolean; before: { markA: boolean; markB: boolean; dirtied: number }; after: string | null };

/** The wasm instance each bound cell VM runs in, in binding order (GuestVm's private `vm`). */
let bound: object[] = [];
/** State of each instance as `GuestVm.adopt` received it: right after its reset or restore, before seeding or any guest call. */
let adopted = new Map<object, VmState>();
let resets: Reset[] = [];
let restores: Reset[] = [];
/** Every image the pool made (setup images), with a copy of its bytes when it was made. */
let made: Array<{ image: VmImage; bytes: Uint8Array }> = [];
let pristine: Snapshot;
let pristineBytes: Uint8Array;

beforeAll(async () => {
  pristine = (await pristineVm()).snapshot;
  pristineBytes = pristine.memory.slice();
  // The markers are nowhere in the image: finding one later means a cell left it.
  expect(contains(pristine.memory, MARK_A) || contains(pristine.memory, MARK_B) || contains(pristine.memory, DIGITS)).toBe(false);
});

beforeEach(() => {
  bound = [];
  adopted = new Map();
  resets = [];
  restores = [];
  made = [];
  const bind = GuestVm.prototype.bind;
  vi.spyOn(GuestVm.prototype, "bind").mockImplementation(function (this: GuestVm, ...args: Parameters<GuestVm["bind"]>) {
    bound.push((this as unknown as { vm: object }).vm);
    return bind.apply(this, args);
  });
  const statics = GuestVm as unknown as Record<string, (...args: any[]) => any>;
  const adopt = statics.adopt!;
  vi.spyOn(statics, "adopt").mockImplementation((vm: QuickJS, ...rest: unknown[]) => {
    adopted.set(vm, stateOf(vm));
    return adopt.call(GuestVm, vm, ...rest);
  });
  const inspect = (vm: QuickJS, image: Snapshot) => {
    const memory = new Uint8Array(vm._getMemory().buffer);
    return { markA: contains(memory, MARK_A), markB: contains(memory, MARK_B), dirtied: dirtiedZeroPages(image.memory, memory) };
  };
  const reuse = GuestVm.reuse;
  vi.spyOn(GuestVm, "reuse").mockImplementation((vm: QuickJS, limits, image) => {
    const target = (image ?? { snapshot: pristine }).snapshot;
    const before = inspect(vm, target);
    adopted.delete(vm);
    const out = reuse.call(GuestVm, vm, limits, image);
    const state = adopted.get(vm);
    if (out)
      resets.push({ instance: vm, image: target, setup: image !== undefined, before, after: state ? differenceFrom(target, state) : "not adopted" });
    return out;
  });
  const restore = GuestVm.restore;
  vi.spyOn(GuestVm, "restore").mockImplementation(async (...args: Parameters<typeof GuestVm.restore>) => {
    const [snapshot, , , , , , instance] = args;
    const before = instance ? inspect(instance, snapshot) : null;
    if (instance) adopted.delete(instance);
    const out = await restore.apply(GuestVm, args);
    const state = instance && adopted.get(instance);
    if (instance && before && state && (out as unknown as { vm: object }).vm === instance) {
      restores.push({ instance, image: snapshot, setup: false, before, after: differenceFrom(snapshot, state) });
    }
    return out;
  });
  const image = GuestVm.prototype.image;
  vi.spyOn(GuestVm.prototype, "image").mockImplementation(function (this: GuestVm) {
    const out = image.call(this);
    made.push({ image: out, bytes: out.snapshot.memory.slice() });
    return out;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  // No reset or cell changed an image in place (its page runs are cached per image object).
  expect(Buffer.from(pristine.memory).equals(Buffer.from(pristineBytes))).toBe(true);
  for (const m of made) expect(Buffer.from(m.image.snapshot.memory).equals(Buffer.from(m.bytes))).toBe(true);
});

type Turn = { session: string; turnId: string; token: string; tenant: string };

async function turn(token: string, body: Record<string, unknown> = {}): Promise<Turn> {
  const session = sessionId();
  return { session, turnId: await openTurn(session, body, token), token, tenant: token === TOKEN_A ? "tenant-a" : "tenant-b" };
}

const run = (t: Turn, code: string) => exec(t.session, t.turnId, code, {}, t.token);

/** The memory of a parked run as stored (decoded from the session's snapshot bytes). */
async function storedMemory(t: Turn, runId: string): Promise<Uint8Array> {
  return (await decodeSnapshot(await sessionProbe(t.session, t.tenant).parkedSnapshot(runId))).memory;
}

/**
 * Tenant B parks cells of `code` (their VMs then come back to the pool too) until one ran in `instance`;
 * each stored snapshot is checked for tenant A's marker and digits. Returns how many ran there.
 */
async function parkInto(
  b: Turn,
  instance: object,
  tries = 5,
  code = "globalThis.mine = 'B-own'; await yield_control(); return mine;",
): Promise<number> {
  let hits = 0;
  for (let i = 0; i < tries && hits === 0; i++) {
    const from = bound.length;
    const parked = await run(b, code);
    expect(parked).toMatchObject({ status: "waiting" });
    const memory = await storedMemory(b, parked.runId);
    expect(contains(memory, MARK_A)).toBe(false);
    expect(contains(memory, DIGITS)).toBe(false);
    if (bound.slice(from).includes(instance)) hits++;
    // Let the pool reset what came back before the next cell asks.
    await sleep(20);
  }
  return hits;
}

describe("a reset writing the image's zero pages as a fill leaves nothing of a stack-heavy cell", () => {
  it("tenant A's recursion to the stack limit, huge frames, regex, JSON and sort: its instance is reset to exactly the pristine image, and tenant B's parked snapshots in it hold none of A", async () => {
    const a = await turn(TOKEN_A);
    expect(await run(a, stackAttack("A7"))).toMatchObject({ status: "completed", value: STACK_RESULT });
    const instance = bound.at(-1)!;
    const b = await turn(TOKEN_B);
    expect(await parkInto(b, instance)).toBe(1);
    const ofA = resets.filter((r) => r.instance === instance);
    expect(ofA.length).toBeGreaterThanOrEqual(1);
    // The attack reached the instance: A's marker and many written pages the image holds as zeros.
    expect(ofA[0]!.before.markA).toBe(true);
    expect(ofA[0]!.before.dirtied).toBeGreaterThan(16);
    for (const r of resets) expect(r.after).toBeNull();
  });

  it("the same attack repeated by both tenants in turn: every reset of every instance is byte-identical to the image", async () => {
    const a = await turn(TOKEN_A);
    const b = await turn(TOKEN_B);
    for (let i = 0; i < 3; i++) {
      expect(await run(a, stackAttack("A7"))).toMatchObject({ status: "completed", value: STACK_RESULT });
      await sleep(20);
      expect(await run(b, stackAttack("B9"))).toMatchObject({ status: "completed", value: STACK_RESULT });
      await sleep(20);
    }
    // Reused again and again: the image's cached page runs are used by later resets.
    expect(resets.length).toBeGreaterThanOrEqual(4);
    expect(resets.some((r) => r.before.markA && r.before.dirtied > 16)).toBe(true);
    expect(resets.some((r) => r.before.markB && r.before.dirtied > 16)).toBe(true);
    for (const r of resets) expect(r.after).toBeNull();
    await expectOnlyIdleHeld();
  });

  it("a cell stopped at its deadline in the middle of deep recursion is never reset and handed on", async () => {
    // `fast`: a 400 ms budget; each overflow is caught and recursed into again until the budget stops it.
    const a = await turn(TOKEN_A, { agentId: "fast" });
    const code = `const M = ['QZX', 'SECRET', 'A7'].join('');
      function f(n) { const s = M + n; try { return f(n + 1) + s.length; } catch (e) { return f(n + 1) + s.length; } }
      return f(0);`;
    expect(await run(a, code)).toMatchObject({ status: "failed" });
    const instance = bound.at(-1)!;
    const b = await turn(TOKEN_B);
    expect(await parkInto(b, instance, 4)).toBe(0);
    expect(resets.some((r) => r.instance === instance)).toBe(false);
    for (const r of resets) expect(r.after).toBeNull();
  });
});

describe("a parked run restored into a used instance is copied whole over what that instance held", () => {
  it("tenant A parks mid-recursion; resumed into instances tenant B's stack-heavy cells used, it holds exactly its own snapshot, and its next park stores none of B", async () => {
    const a = await turn(TOKEN_A);
    const parkMidStack = `
      const M = ['QZX', 'SECRET', 'A7'].join('');
      const N = 73910000 * 100000000 + 48251234;
      async function down(n) { const s = String(N) + M + n; if (n === 0) { await yield_control(); return s.length; } return (await down(n - 1)) + s.length; }
      const first = await down(200);
      const second = await down(50);
      return first + second;`;
    const parked = await run(a, parkMidStack);
    expect(parked).toMatchObject({ status: "waiting" });
    const b = await turn(TOKEN_B);
    // B's VMs come back used (not reset yet, or reset): either can be what A's run is restored into.
    expect(await run(b, stackAttack("B9"))).toMatchObject({ status: "completed", value: STACK_RESULT });
    let r = await wait(a.session, a.turnId, parked.runId, a.token);
    expect(r).toMatchObject({ status: "waiting" });
    const again = await storedMemory(a, parked.runId);
    expect(contains(again, MARK_A)).toBe(true);
    expect(contains(again, MARK_B)).toBe(false);
    expect(await run(b, stackAttack("B9"))).toMatchObject({ status: "completed", value: STACK_RESULT });
    r = await wait(a.session, a.turnId, r.runId, a.token);
    expect(r).toMatchObject({ status: "completed" });
    // Each resume went into a spare's instance (the pool keeps B's), and came out exactly its snapshot.
    expect(restores.length).toBeGreaterThanOrEqual(1);
    for (const x of restores) expect(x.after).toBeNull();
    for (const x of resets) expect(x.after).toBeNull();
  });
});

describe("setup images (a turn's MCP namespace) are reset to as exactly as the pristine one", () => {
  it("stack-heavy cells in turns with the same MCP server: every reset to the setup's image is byte-identical to it, and tenant B's parked snapshots hold none of A", async () => {
    const mcp = { mcpServers: { everything: { url: inject("mcpEverythingUrl") } } };
    const a = await turn(TOKEN_A, mcp);
    const b = await turn(TOKEN_B, mcp);
    const attack = `const names = Object.keys(MCP.everything).length; ${stackAttack("A7").replace("return {", "return { names,")}`;
    for (let i = 0; i < 4; i++) {
      const r = await run(a, attack);
      expect(r).toMatchObject({ status: "completed", value: STACK_RESULT });
      expect(r.value.names).toBeGreaterThan(3);
      await sleep(20);
    }
    // The setup's image may have been made by an earlier file in this runtime (isolate: false): resets to it are what count.
    const instance = bound.at(-1)!;
    expect(await parkInto(b, instance, 4, "const n = Object.keys(MCP.everything).length; await yield_control(); return n;")).toBe(1);
    const toSetup = resets.filter((r) => r.setup);
    expect(toSetup.length).toBeGreaterThanOrEqual(1);
    expect(toSetup.some((r) => r.before.markA)).toBe(true);
    for (const r of resets) expect(r.after).toBeNull();
  });
});
