/**
 * wasm/quickjs.wasm: quickjs-wasi's engine with a stack low-water mark. The pool resets a used VM to
 * its image by rewriting its memory, and the engine's stack is the first 1 MiB of it (stack-first
 * layout), of which a cell uses a few KiB. Only the engine's stack-pointer writes can move that use
 * down, so each `global.set __stack_pointer` is followed by `__stack_low = min(__stack_low,
 * __stack_pointer)`, and `__stack_low` is exported: image-restore.ts reads how deep a cell went and
 * rewrites only that part of the stack (plus the 128-byte red zone LLVM lets leaf functions use below
 * it). Nothing else changes: same functions, same data, same memory after start, so snapshots and the
 * engine id (snapshot-store/engine-image.ts) are those of the package's build.
 *
 *   node scripts/instrument-quickjs.mjs           writes wasm/quickjs.wasm from node_modules/quickjs-wasi
 *   node scripts/instrument-quickjs.mjs --check   fails when wasm/quickjs.wasm is not that file
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const SOURCE = path.join(ROOT, "node_modules", "quickjs-wasi", "quickjs.wasm");
export const TARGET = path.join(ROOT, "wasm", "quickjs.wasm");
export const LOW_EXPORT = "__stack_low";

const SECTION = { import: 2, global: 6, export: 7, code: 10 };
const GLOBAL_KIND = 3;
const VALTYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

class Reader {
  constructor(bytes, pos = 0) {
    this.b = bytes;
    this.p = pos;
  }
  byte() {
    if (this.p >= this.b.length) throw new Error("unexpected end of module");
    return this.b[this.p++];
  }
  u32() {
    let result = 0;
    let shift = 0;
    for (;;) {
      const x = this.byte();
      result += (x & 0x7f) * 2 ** shift;
      if (!(x & 0x80)) return result;
      shift += 7;
      if (shift > 35) throw new Error("LEB128 too long");
    }
  }
  /** A signed LEB128 of any width, skipped. */
  sleb() {
    for (let i = 0; ; i++) {
      if (!(this.byte() & 0x80)) return;
      if (i > 10) throw new Error("LEB128 too long");
    }
  }
  skip(n) {
    this.p += n;
  }
}

function leb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function name(r) {
  const len = r.u32();
  const s = new TextDecoder().decode(r.b.subarray(r.p, r.p + len));
  r.skip(len);
  return s;
}

function sections(bytes) {
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (!magic.every((x, i) => bytes[i] === x)) throw new Error("not a WebAssembly 1.0 module");
  const out = [];
  const r = new Reader(bytes, 8);
  while (r.p < bytes.length) {
    const header = r.p;
    const id = r.byte();
    const size = r.u32();
    out.push({ id, header, start: r.p, end: r.p + size });
    r.skip(size);
  }
  return out;
}

/**
 * Skip one instruction's immediates; true when it is `global.set` of `sp`. Covers what the package's
 * build declares in its target_features (mutable-globals, nontrapping-fptoint, bulk-memory, sign-ext,
 * reference-types, multivalue, extended-const); anything else is refused rather than mis-parsed.
 */
function step(r, op, sp) {
  if (op <= 0x01 || op === 0x05 || op === 0x0b || op === 0x0f || op === 0x1a || op === 0x1b || (op >= 0x45 && op <= 0xc4) || op === 0xd1)
    return false;
  switch (op) {
    case 0x02:
    case 0x03:
    case 0x04: {
      const t = r.b[r.p];
      if (t === 0x40 || VALTYPES.has(t)) r.skip(1);
      else r.sleb();
      return false;
    }
    case 0x0c:
    case 0x0d:
    case 0x10:
    case 0x20:
    case 0x21:
    case 0x22:
    case 0x23:
    case 0x25:
    case 0x26:
    case 0x3f:
    case 0x40:
    case 0xd2:
      r.u32();
      return false;
    case 0x24:
      return r.u32() === sp;
    case 0x0e: {
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.u32();
      return false;
    }
    case 0x11:
      r.u32();
      r.u32();
      return false;
    case 0x1c: {
      const n = r.u32();
      r.skip(n);
      return false;
    }
    case 0x41:
    case 0x42:
      r.sleb();
      return false;
    case 0x43:
      r.skip(4);
      return false;
    case 0x44:
      r.skip(8);
      return false;
    case 0xd0:
      r.skip(1);
      return false;
    case 0xfc: {
      const sub = r.u32();
      if (sub <= 7) return false;
      if (sub === 8 || sub === 10 || sub === 12 || sub === 14) {
        r.u32();
        r.u32();
        return false;
      }
      if (sub <= 17) {
        r.u32();
        return false;
      }
      throw new Error(`unsupported instruction 0xfc ${sub}`);
    }
    default:
      if (op >= 0x28 && op <= 0x3e) {
        r.u32();
        r.u32();
        return false;
      }
      throw new Error(`unsupported instruction 0x${op.toString(16)}`);
  }
}

/** One function body with the low-water update after every stack-pointer write; and how many. */
function instrumentBody(bytes, start, end, sp, low) {
  const r = new Reader(bytes, start);
  const groups = r.u32();
  for (let i = 0; i < groups; i++) {
    r.u32();
    if (!VALTYPES.has(r.byte())) throw new Error("unsupported local type");
  }
  // low = select(sp, low, sp < low): no branch, no new block (labels keep their depths).
  const update = [0x23, ...leb(sp), 0x23, ...leb(low), 0x23, ...leb(sp), 0x23, ...leb(low), 0x49, 0x1b, 0x24, ...leb(low)];
  const out = [];
  let copied = start;
  let writes = 0;
  while (r.p < end) {
    const op = r.byte();
    if (step(r, op, sp)) {
      for (let i = copied; i < r.p; i++) out.push(bytes[i]);
      out.push(...update);
      copied = r.p;
      writes++;
    }
  }
  if (r.p !== end || bytes[end - 1] !== 0x0b) throw new Error("function body did not end where its size says");
  for (let i = copied; i < end; i++) out.push(bytes[i]);
  return { body: out, writes };
}

/** The instrumented module's bytes (see the file comment); `bytes` is the package's quickjs.wasm. */
export function instrumentStackLowWater(bytes) {
  const all = sections(bytes);
  const find = (id) => {
    const found = all.filter((s) => s.id === id);
    if (found.length !== 1) throw new Error(`expected one section ${id}, found ${found.length}`);
    return found[0];
  };
  let importedGlobals = 0;
  const imports = all.find((s) => s.id === SECTION.import);
  if (imports) {
    const r = new Reader(bytes, imports.start);
    const n = r.u32();
    for (let i = 0; i < n; i++) {
      name(r);
      name(r);
      const kind = r.byte();
      if (kind === 0) r.u32();
      else if (kind === 1) {
        r.skip(1);
        const flags = r.u32();
        r.u32();
        if (flags & 1) r.u32();
      } else if (kind === 2) {
        const flags = r.u32();
        r.u32();
        if (flags & 1) r.u32();
      } else if (kind === GLOBAL_KIND) {
        r.skip(2);
        importedGlobals++;
      } else throw new Error(`unsupported import kind ${kind}`);
    }
  }
  const exports = find(SECTION.export);
  let sp = -1;
  {
    const r = new Reader(bytes, exports.start);
    const n = r.u32();
    for (let i = 0; i < n; i++) {
      const exported = name(r);
      const kind = r.byte();
      const index = r.u32();
      if (exported === LOW_EXPORT) throw new Error("the module is instrumented already");
      if (exported === "__stack_pointer" && kind === GLOBAL_KIND) sp = index;
    }
  }
  if (sp < importedGlobals) throw new Error("__stack_pointer is not a global the module defines");
  const globals = find(SECTION.global);
  const gr = new Reader(bytes, globals.start);
  const defined = gr.u32();
  const firstGlobal = gr.p;
  // The new global starts where the stack pointer does (a copy of its constant initializer).
  let init = null;
  for (let i = 0; i < defined; i++) {
    const type = gr.byte();
    const mutable = gr.byte();
    const from = gr.p;
    while (bytes[gr.p] !== 0x0b) step(gr, gr.byte(), -1);
    gr.skip(1);
    if (importedGlobals + i === sp) {
      if (type !== 0x7f || mutable !== 1) throw new Error("__stack_pointer is not a mutable i32");
      init = bytes.subarray(from, gr.p);
    }
  }
  const low = importedGlobals + defined;
  if (gr.p !== globals.end) throw new Error("global section longer than its globals");
  const globalPayload = [...leb(defined + 1)];
  for (let i = firstGlobal; i < globals.end; i++) globalPayload.push(bytes[i]);
  globalPayload.push(0x7f, 0x01, ...init);

  const er = new Reader(bytes, exports.start);
  const exportCount = er.u32();
  const exportPayload = [...leb(exportCount + 1)];
  for (let i = er.p; i < exports.end; i++) exportPayload.push(bytes[i]);
  exportPayload.push(...leb(LOW_EXPORT.length), ...new TextEncoder().encode(LOW_EXPORT), GLOBAL_KIND, ...leb(low));

  const code = find(SECTION.code);
  const cr = new Reader(bytes, code.start);
  const functions = cr.u32();
  const codePayload = [...leb(functions)];
  let writes = 0;
  for (let i = 0; i < functions; i++) {
    const size = cr.u32();
    const done = instrumentBody(bytes, cr.p, cr.p + size, sp, low);
    cr.skip(size);
    writes += done.writes;
    codePayload.push(...leb(done.body.length));
    for (const b of done.body) codePayload.push(b);
  }
  if (writes === 0) throw new Error("no stack-pointer writes found");

  const replaced = new Map([
    [globals, globalPayload],
    [exports, exportPayload],
    [code, codePayload],
  ]);
  const parts = [bytes.subarray(0, 8)];
  for (const s of all) {
    const payload = replaced.get(s);
    if (!payload) {
      parts.push(bytes.subarray(s.header, s.end));
      continue;
    }
    parts.push(Uint8Array.of(s.id, ...leb(payload.length)), Uint8Array.from(payload));
  }
  return new Uint8Array(Buffer.concat(parts));
}

function main() {
  const derived = instrumentStackLowWater(new Uint8Array(fs.readFileSync(SOURCE)));
  if (process.argv.includes("--check")) {
    const committed = fs.existsSync(TARGET) ? new Uint8Array(fs.readFileSync(TARGET)) : null;
    if (!committed || Buffer.compare(Buffer.from(committed), Buffer.from(derived)) !== 0) {
      console.error(
        "wasm/quickjs.wasm is not the instrumented build of node_modules/quickjs-wasi/quickjs.wasm: run node scripts/instrument-quickjs.mjs",
      );
      process.exit(1);
    }
    return;
  }
  fs.writeFileSync(TARGET, derived);
  console.log(`wrote ${path.relative(ROOT, TARGET)} (${derived.length} bytes)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
