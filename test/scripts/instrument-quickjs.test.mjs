// scripts/instrument-quickjs.mjs: the committed wasm/quickjs.wasm is exactly the package's engine with
// the stack low-water mark, the mark follows the deepest stack pointer, and nothing else changes.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { QuickJS } from "quickjs-wasi";
import { instrumentStackLowWater, LOW_EXPORT, SOURCE, TARGET } from "../../scripts/instrument-quickjs.mjs";

const stockBytes = new Uint8Array(fs.readFileSync(SOURCE));
const stock = new WebAssembly.Module(stockBytes);
const instrumented = new WebAssembly.Module(fs.readFileSync(TARGET));

test("wasm/quickjs.wasm is the instrumented build of the installed quickjs-wasi engine", () => {
  const derived = instrumentStackLowWater(stockBytes);
  assert.ok(Buffer.from(derived).equals(fs.readFileSync(TARGET)), "run node scripts/instrument-quickjs.mjs");
  assert.throws(() => instrumentStackLowWater(derived), /instrumented already/);
});

test("the same imports and exports as the package's engine, plus the mark", () => {
  assert.deepEqual(WebAssembly.Module.imports(instrumented), WebAssembly.Module.imports(stock));
  assert.deepEqual(WebAssembly.Module.exports(instrumented), [...WebAssembly.Module.exports(stock), { name: LOW_EXPORT, kind: "global" }]);
});

test("a VM of it starts with the same memory as one of the package's engine (same engine id, same snapshots)", async () => {
  // Clock and randomness frozen, as the engine image is built (snapshot-store/engine-image.ts).
  const frozen = (memory) => ({
    clock_time_get: (_id, _precision, out) => (new DataView(memory.buffer).setBigUint64(out, 0n, true), 0),
    random_get: (buf, len) => (new Uint8Array(memory.buffer, buf, len).fill(0), 0),
  });
  const options = { memoryLimit: 64 << 20, maxStackSize: 256 * 1024, timezoneOffset: 0, wasi: frozen };
  const a = await QuickJS.create({ wasm: stock, ...options });
  const b = await QuickJS.create({ wasm: instrumented, ...options });
  try {
    assert.ok(Buffer.from(a._getMemory().buffer).equals(Buffer.from(b._getMemory().buffer)));
    // A snapshot taken on the package's engine runs on this one.
    a.evalCode("globalThis.kept = [1, 2, 3].map((x) => x * 7)").dispose();
    const restored = await QuickJS.restore(a.snapshot(), { wasm: instrumented, ...options });
    try {
      assert.equal(restored.evalCode("kept.join(',')").toString(), "7,14,21");
    } finally {
      restored.dispose();
    }
  } finally {
    a.dispose();
    b.dispose();
  }
});

test("the mark is the deepest stack pointer the engine reached, and every stack byte it wrote lies above it", async () => {
  const vm = await QuickJS.create({ wasm: instrumented, maxStackSize: 256 * 1024 });
  try {
    const { __stack_pointer: sp, [LOW_EXPORT]: low } = vm._getExports();
    const top = sp.value;
    const depthOf = (code) => {
      low.value = sp.value;
      try {
        vm.evalCode(code).dispose();
      } catch {
        // a RangeError from QuickJS's own limit
      }
      assert.equal(sp.value, top, "the stack pointer is back at the top");
      return top - low.value;
    };
    const shallow = depthOf("1 + 2");
    const deep = depthOf("function f(n) { return n ? f(n - 1) + 1 : 0 } f(200)");
    const limit = depthOf("function g(n) { return g(n + 1) } g(0)");
    assert.ok(shallow > 0 && shallow < 8192, `shallow ${shallow}`);
    assert.ok(deep > 10 * shallow, `deep ${deep}`);
    // Stopped by QuickJS's limit: a little past it, never far.
    assert.ok(limit >= 256 * 1024 && limit < 256 * 1024 + 16384, `limit ${limit}`);
    const memory = new Uint8Array(vm._getMemory().buffer);
    let lowest = 0;
    while (memory[lowest] === 0) lowest++;
    assert.ok(lowest >= low.value - 128, `written at ${lowest}, mark ${low.value}`);
  } finally {
    vm.dispose();
  }
});

/** A module built by hand: SP exported as __stack_pointer, `frame(n)` moves it down by n inside nested control flow. */
function tinyModule() {
  const leb = (n) => {
    const out = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    return out;
  };
  const section = (id, payload) => [id, ...leb(payload.length), ...payload];
  const str = (s) => [...leb(s.length), ...Buffer.from(s)];
  // (func (param i32) (local i32)
  //   block  block  local.get 0  br_table 0 1 0  end  end
  //   i64.const -1 drop  f64.const 0 drop
  //   global.get 0  local.get 0  i32.sub  local.tee 1  global.set 0
  //   local.get 1  i32.const 0  i32.store offset=4
  //   local.get 1  local.get 0  i32.add  global.set 0)
  const body = [
    1, 1, 0x7f, 0x02, 0x40, 0x02, 0x40, 0x20, 0, 0x0e, 2, 0, 1, 0, 0x0b, 0x0b, 0x42, 0x7f, 0x1a, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x23, 0, 0x20, 0,
    0x6b, 0x22, 1, 0x24, 0, 0x20, 1, 0x41, 0, 0x36, 2, 4, 0x20, 1, 0x20, 0, 0x6a, 0x24, 0, 0x0b,
  ];
  return Uint8Array.from([
    0,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, [1, 0x60, 1, 0x7f, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(6, [1, 0x7f, 1, 0x41, 0x80, 0x80, 0x04, 0x0b]), // (global (mut i32) (i32.const 65536))
    ...section(7, [3, ...str("frame"), 0, 0, ...str("__stack_pointer"), 3, 0, ...str("memory"), 2, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

test("a hand-built module: the mark follows stack-pointer writes inside blocks, and the module stays valid", async () => {
  const { instance } = await WebAssembly.instantiate(instrumentStackLowWater(tinyModule()));
  const { frame, __stack_pointer: sp, [LOW_EXPORT]: low } = instance.exports;
  assert.equal(low.value, 65536, "starts where the stack pointer does");
  frame(100);
  assert.equal(sp.value, 65536);
  assert.equal(low.value, 65536 - 100);
  frame(40);
  assert.equal(low.value, 65536 - 100, "a shallower frame leaves it");
  low.value = sp.value;
  frame(300);
  assert.equal(low.value, 65536 - 300);
});

test("an instruction it does not know is refused, not skipped", () => {
  const bytes = tinyModule();
  // i32.const 0 → a SIMD prefix (0xfd), which the engine's build does not use.
  const at = bytes.lastIndexOf(0x41);
  const bad = Uint8Array.from(bytes);
  bad[at] = 0xfd;
  assert.throws(() => instrumentStackLowWater(bad), /unsupported instruction 0xfd/);
});
