import { describe, expect, it } from "vitest";
import { frozenClock } from "../../src/runtime";
import { exec, expectHealthy, freshTurn } from "./helpers";
import { setClock } from "./session-controls";

describe("hostile cells are contained and the session survives", () => {
  it("while(true){} times out on the real clock", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    const r = await exec(session, turnId, "while (true) {}");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(r.telemetry).toBeDefined();
    await expectHealthy(session, turnId);
  });

  it("while(true){} times out on a frozen clock (CPU budget)", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    setClock(frozenClock());
    const r = await exec(session, turnId, "let i = 0; while (true) { i++ }");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    await expectHealthy(session, turnId);
  });

  it("an arithmetic loop on a frozen clock is stopped too", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    setClock(frozenClock());
    const r = await exec(session, turnId, "let x = 0; for (;;) { x = (x * 31 + 7) % 1000003; }");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    await expectHealthy(session, turnId);
  });

  it("a memory bomb fails and the VM is discarded", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "const a = []; for (;;) a.push('x'.repeat(1024) + a.length);");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/memoryLimitBytes/);
    await expectHealthy(session, turnId);
  });

  it("a guest try/catch cannot swallow out-of-memory", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "try { const a = []; for (;;) a.push(new Array(4096).fill(1)); } catch (e) { return 'caught'; }");
    expect(r.status).toBe("failed");
    await expectHealthy(session, turnId);
  });

  it("deep recursion fails the cell, not the object", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "function f(n) { return f(n + 1) + 1; } return f(0);");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/stack|recursion/i);
    await expectHealthy(session, turnId);
  });

  it("recursion caught by the guest is ordinary", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "function f() { return f(); } try { f(); } catch (e) { return e instanceof RangeError || e instanceof InternalError; }",
    );
    expect(r).toMatchObject({ status: "completed", value: true });
  });

  it("an output flood via text() in a loop stays bounded and successful", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "for (let i = 0; i < 200000; i++) text('line ' + i); return 'ok';");
    expect(r.status).toBe("completed");
    expect(r.value).toBe("ok");
    expect(JSON.stringify(r.output).length).toBeLessThanOrEqual(2048 + 512);
    const marker = r.output.at(-1);
    expect(marker.type).toBe("json");
    expect(marker.value.truncated).toBe(true);
    expect(marker.value.omittedBytes).toBeGreaterThan(1_000_000);
    await expectHealthy(session, turnId);
  });

  it("megabyte text()/json() floods are charged to the budget and stop as a timeout (not minutes of host work)", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    expect(await exec(session, turnId, "const s = 'x'.repeat(4 << 20); for (;;) text(s);")).toMatchObject({ status: "failed", code: "timeout" });
    expect(await exec(session, turnId, "const s = 'x'.repeat(1 << 20); for (;;) { try { json(s); } catch (e) {} }")).toMatchObject({
      status: "failed",
      code: "timeout",
    });
    await expectHealthy(session, turnId);
  });

  it("stack-trace call sites do not hand out prelude functions; start is one-shot", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "Error.prepareStackTrace = (e, cs) => cs; const st = new Error().stack; return [typeof st[0].getFunction, typeof st[0].getThis];",
    );
    expect(r.value).toEqual(["undefined", "undefined"]);
  });

  it("a 10 MB return value comes back as a bounded truncated marker", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "return 'é'.repeat(5 * 1024 * 1024);");
    expect(r.status).toBe("completed");
    expect(r.value.truncated).toBe(true);
    expect(typeof r.value.prefix).toBe("string");
    expect(r.value.prefix.startsWith('"ééé')).toBe(true);
    expect(r.value.omittedBytes).toBeGreaterThan(10 * 1024 * 1024 - 70_000);
    expect(r.value.guidance).toMatch(/narrower/);
    expect(JSON.stringify(r.value).length).toBeLessThanOrEqual(65536 + 512);
    await expectHealthy(session, turnId);
  });

  it("large output and a large value share one budget: both bounded, still completed", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "text('o'.repeat(1500)); return 'v'.repeat(1500);");
    expect(r.status).toBe("completed");
    const total = JSON.stringify(r.output ?? []).length + JSON.stringify(r.value).length;
    expect(total).toBeLessThanOrEqual(2048 + 512);
    // Neither side fits whole next to the other.
    expect(JSON.stringify(r)).not.toContain("o".repeat(1500));
    expect(r.value).toMatchObject({ truncated: true, prefix: expect.stringMatching(/^"vvv/) });
    await expectHealthy(session, turnId);
  });

  it("an oversized error stays failed and ends with [error truncated]", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "throw new Error('root cause: ' + 'x'.repeat(100000));");
    expect(r.status).toBe("failed");
    expect(r.error.startsWith("Error: root cause: xxx")).toBe(true);
    expect(r.error.endsWith("[error truncated]")).toBe(true);
    expect(r.error.length).toBeLessThan(2048);
    await expectHealthy(session, turnId);
  });

  it("constructor.constructor('return this')() finds only the guest global, no host globals", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const g = ({}).constructor.constructor('return this')();
       const names = ['fetch','process','require','Deno','Bun','WebAssembly','caches','crypto','navigator','Request','Response','importScripts','module','exports','global','self','scheduler','std','os'];
       return { same: g === globalThis, present: names.filter((n) => typeof g[n] !== 'undefined') };`,
    );
    expect(r).toMatchObject({ status: "completed", value: { same: true, present: [] } });
  });

  it("a Proxy or getter-laden return value runs no host-side traps and does not crash", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const p = new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('keys'); } });
       return p;`,
    );
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/trap|keys/);
    const r2 = await exec(session, turnId, "return { get x() { return 41 + 1; }, toJSON() { return { y: 1 }; } };");
    expect(r2).toMatchObject({ status: "completed", value: { y: 1 } });
    const r3 = await exec(session, turnId, "return { get x() { while (true) {} } };", {});
    expect(r3.status).toBe("failed");
    expect(r3.code).toBe("timeout");
    await expectHealthy(session, turnId);
  });

  it("a cyclic value is output_limit_exceeded", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "const a = {}; a.self = a; return a;");
    expect(r).toMatchObject({ status: "failed", code: "output_limit_exceeded" });
    await expectHealthy(session, turnId);
  });

  it("import(), require and import declarations are rejected before execution", async () => {
    const { session, turnId } = await freshTurn();
    for (const code of ["return await import('x')", "const fs = require('fs'); return 1", "import fs from 'fs'; return 1"]) {
      const r = await exec(session, turnId, code);
      expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
      expect(r.telemetry.counters.call).toBe(0);
    }
    // Obfuscated dynamic import still has no module loader.
    const r = await exec(session, turnId, "return await eval('imp' + 'ort(\"fs\")')");
    expect(r.status).toBe("failed");
    expect(r.error).not.toMatch(/Host callback|bridge/);
    await expectHealthy(session, turnId);
  });

  it("shell commands get actionable invalid_input guidance", async () => {
    const { session, turnId } = await freshTurn();
    for (const code of ["ls -la", "git status", "npm test", "cat file | grep x"]) {
      const r = await exec(session, turnId, code);
      expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
      expect(r.error).toMatch(/JavaScript/);
    }
    const viaCommand = await exec(session, turnId, "", { code: undefined, command: "git status" });
    expect(viaCommand).toMatchObject({ status: "failed", code: "invalid_input" });
    await expectHealthy(session, turnId);
  });

  it("an unawaited failing call fails the cell", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "shipping_get({ id: 'nope' }); return 'looks fine';");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/Unhandled promise rejection.*shipment nope not found/);
    await expectHealthy(session, turnId);
  });

  it("a throwing timer callback fails the cell", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "setTimeout(() => { throw new Error('boom'); }, 1); return 'looks fine';");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/timer callback: Error: boom/);
    await expectHealthy(session, turnId);
  });

  it("a promise that nothing will settle fails instead of hanging", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "await new Promise(() => {}); return 1;");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/nothing will settle/);
    await expectHealthy(session, turnId);
  });
});

describe("guest cannot reach host internals", () => {
  it("the control object is not a guest global; guessed ids are nothing; timers are capped", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const timers = []; let err;
       try { for (let i = 0; i < 2000; i++) timers.push(setTimeout(() => {}, 1e9)); } catch (e) { err = e.name + ': ' + e.message; }
       timers.forEach(clearTimeout);
       return { control: typeof __codemode, host: typeof __cm_host, id: typeof globalThis['t' + '0'.repeat(16)],
                names: Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith('__')), err, live: timers.length };`,
    );
    expect(r.value).toEqual({
      control: "undefined",
      host: "undefined",
      id: "undefined",
      names: [],
      err: expect.stringMatching(/^RangeError: too many pending timers \(limit 1000\)/),
      live: 1000,
    });
    await expectHealthy(session, turnId);
  });

  it("MCP, namespaces and API exist and are empty until MCP servers are attached", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "let err; try { await API.read('mcp/github.d.ts'); } catch (e) { err = e.message; } return { mcp: Object.keys(MCP), ns: Object.keys(namespaces), files: await API.list('mcp'), err };",
    );
    expect(r.value).toEqual({ mcp: [], ns: [], files: [], err: 'API.read: no file "mcp/github.d.ts"; API.list() shows the files' });
  });
});

describe("native built-ins are charged by size: none holds the session past its budget", () => {
  // A frozen clock (what production looks like during synchronous code): only counted work
  // can stop these. Each was a call that ran 30 s to minutes before built-ins were metered.
  const corpus: Array<[string, string]> = [
    ["join over 2^32-1 holes", "return new Array(2 ** 32 - 1).join('x').length"],
    ["join over 1e9 holes", "return new Array(1e9).join('').length"],
    ["join of a huge generic array-like", "return Array.prototype.join.call({ length: 2 ** 53 - 1 }).length"],
    ["indexOf over a 10 MB string, 500 times", "const s = 'a'.repeat(1e7); let n = 0; for (let i = 0; i < 500; i++) n += s.indexOf('b'); return n"],
    [
      "includes over a 10 MB string via a String object",
      "const s = new String('a'.repeat(1e7)); let n = 0; for (let i = 0; i < 500; i++) n += String.prototype.includes.call(s, 'b') ? 1 : 0; return n",
    ],
    ["forEach over 1e9 holes", "new Array(1e9).forEach(() => {}); return 1"],
    [
      "includes/indexOf over 1e9 holes in a loop",
      "const a = new Array(1e9); let n = 0; for (let i = 0; i < 100; i++) n += a.indexOf(1) + (a.includes(2) ? 1 : 0); return n",
    ],
    ["reverse of 1e9 holes", "new Array(1e9).reverse(); return 1"],
    ["sort of 1e9 holes", "new Array(1e9).sort(); return 1"],
    ["split of a 10 MB string in a loop", "const s = 'ab'.repeat(5e6); let n = 0; for (let i = 0; i < 200; i++) n += s.split('a').length; return n"],
    [
      "replaceAll with a long needle",
      "const s = 'a'.repeat(3e6); let n = 0; for (let i = 0; i < 100; i++) n += s.replaceAll('a'.repeat(1000) + 'b', '').length; return n",
    ],
    ["JSON.parse of a large text in a loop", "const t = JSON.stringify(new Array(2e5).fill(1)); let n = 0; for (;;) n += JSON.parse(t).length"],
    ["typed array sort in a loop", "const a = new Float64Array(1e6); for (;;) a.sort()"],
    ["catastrophic regex backtracking", "return /(a+)+$/.test('a'.repeat(40) + 'b')"],
    ["shift on a large array in a loop", "const a = new Array(5e5).fill(1); for (;;) { a.shift(); a.push(1); }"],
    ["flat of an array holding 2^32-1 holes", "return [new Array(2 ** 32 - 1)].flat().length"],
    ["flatMap returning huge hole arrays", "return [1, 2, 3].flatMap(() => new Array(2 ** 30)).length"],
    ["concat of a spreadable array-like", "return [].concat({ [Symbol.isConcatSpreadable]: true, length: 2 ** 32 - 1 }).length"],
    ["Iterator drop over 2^27 holes", "return new Array(2 ** 27).values().drop(2 ** 27 - 1).next().done"],
    [
      "array includes of a long string needle",
      "const s = 'a'.repeat(2 ** 21), t = 'a'.repeat(2 ** 21 - 1) + 'b'; let n = 0; for (let i = 0; i < 50; i++) n += new Array(5000).fill(s).includes(t) ? 1 : 0; return n",
    ],
    [
      "string indexOf with an object needle",
      "const h = 'a'.repeat(2 ** 20); const nd = { toString() { return 'a'.repeat(2 ** 17) + 'b'; } }; return h.indexOf(nd)",
    ],
    [
      "BigInt toString near the engine's cap, in a loop",
      "const x = (1n << 1000000n) - 1n; let n = 0; for (let i = 0; i < 100; i++) n += x.toString().length; return n",
    ],
    [
      "sort of references to two long strings",
      "const s = 'a'.repeat(2 ** 22), t = 'a'.repeat(2 ** 22 - 1) + 'b'; const a = []; for (let i = 0; i < 1000; i++) a.push(i % 2 ? s : t); for (;;) a.slice().sort()",
    ],
    ["sort metering with Math.log2 patched", "Math.log2 = () => -1e9; const a = new Int32Array(2 ** 23); for (;;) a.sort()"],
    [
      "parseInt of a long digit string in a loop",
      "const s = '1'.repeat(3e6); let n = 0; for (let i = 0; i < 4000; i++) n += parseInt(s) > 0 ? 1 : 0; return n",
    ],
    [
      "encodeURIComponent of a long string in a loop",
      "const s = 'é'.repeat(2e6); let n = 0; for (let i = 0; i < 4000; i++) n += encodeURIComponent(s).length; return n",
    ],
  ];
  for (const [name, code] of corpus) {
    it(`${name}: stopped as a timeout, session healthy`, async () => {
      const { session, turnId } = await freshTurn({ agentId: "fast" });
      setClock(frozenClock());
      const r = await exec(session, turnId, code);
      expect(r).toMatchObject({ status: "failed", code: "timeout" });
      expect(r.error).toContain("timeoutMs 400");
      await expectHealthy(session, turnId);
    });
  }

  it("a refused built-in cannot be retried by catching the refusal", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    setClock(frozenClock());
    const r = await exec(session, turnId, "const a = new Array(1e9); for (;;) { try { a.join(''); } catch (e) {} }");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
  });

  it("an array-like whose length is an object cannot under-report its size", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    const r = await exec(
      session,
      turnId,
      "let n = 0; const o = { length: { valueOf() { return n++ ? 2 ** 29 : 0; } } }; try { return Array.prototype.join.call(o, '').length; } catch (e) { return e.name + ': ' + e.message; }",
    );
    expect(r).toMatchObject({ status: "completed", value: expect.stringMatching(/^TypeError: .*primitive length/) });
  });

  it("metered string searches still behave: object needles, RegExp needles, replacer functions", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "const nd = { toString() { return 'b'; } }; return ['abc'.indexOf(nd), 'a-b'.split({ toString: () => '-' }), 'aXa'.replace(/a/g, 'b'), 'abab'.replaceAll('a', (m) => m.toUpperCase()), [[1, [2]], [3]].flat(Infinity), [1, 2].flatMap((x) => [x, x * 10]), (() => { try { 'a'.startsWith(/a/); return 'no'; } catch (e) { return e.name; } })()];",
    );
    expect(r).toMatchObject({ status: "completed", value: [1, ["a", "b"], "bXb", "AbAb", [1, 2, 3], [1, 10, 2, 20], "TypeError"] });
  });

  it("console.log of a function whose name getter throws prints it, never fails the cell", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "const f = function () {}; Object.defineProperty(f, 'name', { get() { throw 1; } }); console.log(f); return 1;",
    );
    expect(r).toMatchObject({ status: "completed", value: 1, output: [{ type: "text", text: "[Function]" }] });
  });

  it("an array-like whose length is a getter cannot under-report its size", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    const r = await exec(
      session,
      turnId,
      "let k = 0; const o = { get length() { return k++ === 0 ? 0 : 2 ** 32 - 1; } }; try { return Array.prototype.join.call(o, 'x').length; } catch (e) { return e.name + ': ' + e.message; }",
    );
    expect(r).toMatchObject({ status: "completed", value: expect.stringMatching(/^TypeError: .*length/) });
  });

  it("ordinary work with the same built-ins still completes within the default budget", async () => {
    const { session, turnId } = await freshTurn();
    setClock(frozenClock());
    const r = await exec(
      session,
      turnId,
      `const a = Array.from({ length: 1e5 }, (_, i) => (i * 7919) % 100003);
       const sorted = [...a].sort((x, y) => x - y);
       const s = a.join(',');
       let hits = 0;
       for (let i = 0; i < 20; i++) hits += s.indexOf(String(i * 13)) >= 0 ? 1 : 0;
       const parsed = JSON.parse(JSON.stringify(a));
       const words = 'lorem ipsum dolor sit amet '.repeat(2000).split(' ').filter(Boolean);
       return [sorted[0], sorted.length, hits, parsed.length, words.length, new Set(words).size];`,
    );
    expect(r).toMatchObject({ status: "completed", value: [0, 100000, 20, 100000, 10000, 5] });
  });

  it("metered built-ins keep their identity, names and behaviour", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `return [
        Array.prototype.join.name, Array.prototype.join.length, String.prototype.padStart.length,
        Object.getPrototypeOf(Uint8Array.prototype).toString === Array.prototype.toString,
        [3, 1, 2].sort().join('-'), 'a-b-c'.split('-').length, 'x'.padStart(3, 'ab'), String([1, [2, 3]]),
        Array.prototype.propertyIsEnumerable('join'), (123n).toString() + (255n).toString(16) + (-5n).toLocaleString(),
      ];`,
    );
    expect(r).toMatchObject({ status: "completed", value: ["join", 1, 1, true, "1-2-3", 3, "abx", "1,2,3", false, "123ff-5"] });
  });
});

describe("the program's own engine-limit errors are its errors, not the gateway's", () => {
  it("a string past the engine's maximum fails without internal_error", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "try { let s = 'ab'; for (;;) s = s + s; } catch (e) { return 'caught ' + e.message; }");
    expect(r.status).toBe("failed");
    expect(r.code).toBeUndefined();
    expect(r.error).toMatch(/engine limit|memoryLimitBytes/);
    await expectHealthy(session, turnId);
  });

  it("an oversized repeat is an ordinary catchable RangeError", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "try { return 'ab'.repeat(2 ** 40).length; } catch (e) { return e.name; }");
    expect(r).toMatchObject({ status: "completed", value: "RangeError" });
  });
});
