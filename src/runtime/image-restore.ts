import { QuickJS, type QuickJSOptions, type Snapshot } from "quickjs-wasi";

const PAGE_BYTES = 4096;
const WASM_PAGE_BYTES = 65536;

/**
 * Below the deepest stack pointer a cell reached, what the engine may still have written: LLVM lets a
 * leaf function use 128 bytes under the stack pointer without moving it (its red zone). A page, to spare.
 */
const STACK_MARGIN = PAGE_BYTES;

/**
 * Always rewritten, mark or not: where a store through a null pointer lands (wasm32 does not trap on
 * it), e.g. quickjs-wasi's glue writing through an unchecked failed `wasm_malloc`, or an engine bug.
 */
const NULL_GUARD_BYTES = 64 * 1024;

type EngineExports = {
  qjs_set_runtime_and_context(runtime: number, context: number): void;
  __stack_pointer: WebAssembly.Global;
  /** The lowest stack pointer since the host last set it (wasm/quickjs.wasm; absent from the package's own build). */
  __stack_low?: WebAssembly.Global;
};

/**
 * Per instance: the address below which its memory is all zeros, as far as is known (0: nothing known).
 * The engine's stack is the bottom of its memory (stack-first layout) and grows down from the image's
 * stack pointer; only the stack-pointer writes can move how deep it is used, and wasm/quickjs.wasm
 * records the lowest in `__stack_low`. So after a reset to an image (whose memory is zero below its
 * first data) the instance's memory stays zero below the lowest stack pointer since, less the margin:
 * the next reset need not write there. Bounded by what the engine writes, not by trust in the cell.
 */
const zeroBelow = new WeakMap<QuickJS, number>();

/** The instance's memory is the image's now, with the stack pointer set: the low-water mark restarts there. */
function settled(vm: QuickJS, exports: EngineExports, stackPointer: number, zeroPrefix: number): void {
  exports.__stack_pointer.value = stackPointer;
  if (!exports.__stack_low) return;
  exports.__stack_low.value = stackPointer;
  zeroBelow.set(vm, zeroPrefix);
}

/** Where the instance's memory is known to be all zeros from address 0 (0: unknown). */
function knownZeroBelow(vm: QuickJS, exports: EngineExports): number {
  const low = exports.__stack_low?.value;
  if (typeof low !== "number") return 0;
  const below = Math.min(zeroBelow.get(vm) ?? 0, low - STACK_MARGIN);
  return below > 0 ? below - (below % PAGE_BYTES) : 0;
}

/**
 * quickjs-wasi 3.7.0's `QuickJS.restore`, less the copy of what a fresh instance already
 * holds. That restore copies the whole image into the new instance's memory, yet most of a
 * pristine image is zero pages or the module's own data segments, which a freshly
 * instantiated memory already has: only the pages that differ are copied (a third of the
 * pristine image). Same steps, same order, through the package's private statics; anything
 * this cannot do exactly (extensions, another package shape) takes `QuickJS.restore`.
 * test/unit/runtime/image-restore.test.ts proves the memory is byte-identical to theirs.
 */
type Internals = {
  normalizeOptions(options: QuickJSOptions): QuickJSOptions & { wasm: unknown; wasi?: unknown };
  resolveModule(wasm: unknown): Promise<WebAssembly.Module>;
  instantiate(module: WebAssembly.Module, vm: QuickJS, wasi: unknown): Promise<{ instance: WebAssembly.Instance }>;
  applyLimits(vm: QuickJS, options: QuickJSOptions): void;
  new (module: WebAssembly.Module): QuickJS;
};

const internals = QuickJS as unknown as Internals;
const usable = ["normalizeOptions", "resolveModule", "instantiate", "applyLimits"].every(
  (name) => typeof (internals as unknown as Record<string, unknown>)[name] === "function",
);

/** Per image: byte ranges [start, end, start, end, …] where it differs from a fresh instance. */
const differing = new WeakMap<Uint8Array, number[]>();

/** Restore `snapshot`, copying only the pages a fresh instance does not already hold. */
export async function restoreImage(snapshot: Snapshot, options: QuickJSOptions): Promise<QuickJS> {
  if (!usable || snapshot.extensions.length > 0) return QuickJS.restore(snapshot, options);
  const opts = internals.normalizeOptions(options);
  const module = await internals.resolveModule(opts.wasm);
  const vm = new internals(module);
  const { instance } = await internals.instantiate(module, vm, opts.wasi);
  (vm as unknown as { setInstance(instance: WebAssembly.Instance): void }).setInstance(instance);
  const memory = instance.exports.memory as WebAssembly.Memory;
  const pages = memory.buffer.byteLength / WASM_PAGE_BYTES;
  const needed = Math.ceil(snapshot.memory.byteLength / WASM_PAGE_BYTES);
  if (needed > pages) memory.grow(needed - pages);
  const dst = new Uint8Array(memory.buffer);
  let runs = differing.get(snapshot.memory);
  if (!runs) {
    // A fresh instance's memory is the module's data segments and zeros: the same every time.
    runs = differingRuns(snapshot.memory, dst);
    differing.set(snapshot.memory, runs);
  }
  for (let i = 0; i < runs.length; i += 2) dst.set(snapshot.memory.subarray(runs[i], runs[i + 1]), runs[i]);
  const exports = vm._getExports() as unknown as EngineExports;
  exports.qjs_set_runtime_and_context(snapshot.runtimePtr, snapshot.contextPtr);
  settled(vm, exports, snapshot.stackPointer, zeroPrefixOf(cachedPageRuns(snapshot.memory)));
  internals.applyLimits(vm, opts);
  return vm;
}

/**
 * The QuickJS object's own fields that tie it to its instance; every other field is reset to
 * what the constructor gives (handlers, callback registry, cached handles, scopes).
 */
const INSTANCE_FIELDS = new Set(["module", "instance", "exports"]);

/**
 * Put a used VM back into the state `restoreImage(snapshot, options)` gives, in place: the same
 * instance, its memory overwritten with the image, the stack pointer and runtime/context set,
 * the JS-side fields as a new object has them, then the options' limits and handlers. What a
 * cell left behind is gone: linear memory is the only state the instance has besides its stack
 * pointer (one mutable global, exported) and a function table nothing writes to. A memory
 * smaller than the image's grows to its size first. Refused (false, the caller disposes the VM)
 * when the VM's memory is larger than the image's, is in the middle
 * of anything (promise waiters, a host settlement), or the object's fields are not the ones this
 * package version has (a bump falls back to fresh instances). Saves instantiating QuickJS and
 * first-touching a new memory on every exec.
 */
export function resetToImage(vm: QuickJS, snapshot: Snapshot, options: QuickJSOptions, repeated = false): boolean {
  if (!usable || snapshot.extensions.length > 0) return false;
  const fields = vm as unknown as Record<string, unknown> & {
    disposed: boolean;
    exports: unknown;
    module: WebAssembly.Module;
    promiseWaiters: Set<unknown>;
    hostSettlementDepth: number;
    loadedExtensions: unknown[];
    _activeScope: unknown;
  };
  if (fields.disposed || !fields.exports || fields.promiseWaiters.size > 0 || fields.hostSettlementDepth !== 0) return false;
  if (fields.loadedExtensions.length > 0 || fields._activeScope !== null) return false;
  const fresh = new internals(fields.module) as unknown as Record<string, unknown>;
  const keys = Object.keys(fresh);
  if (keys.length !== Object.keys(fields).length || keys.some((key) => !Object.hasOwn(fields, key))) return false;
  const memory = vm._getMemory();
  // A smaller memory grows to the image's size (an image with a setup installed is larger than the
  // pristine one); a larger one cannot shrink, and zero pages past the image would weigh on its snapshots.
  const have = memory.buffer.byteLength / WASM_PAGE_BYTES;
  const pages = Math.ceil(snapshot.memory.byteLength / WASM_PAGE_BYTES);
  if (have > pages) return false;
  for (const key of keys) if (!INSTANCE_FIELDS.has(key)) fields[key] = fresh[key];
  if (have < pages) memory.grow(pages - have);
  // The whole image, written without comparing (comparing first to skip equal pages costs as much as
  // copying them), except where both the instance and the image are known to be all zeros: the stack
  // region under the deepest point reached since the last reset (see `zeroBelow`), most of 1 MiB after a
  // usual cell. An image reset to again and again (`repeated`: the pool's) has its zero pages written as
  // a fill, which reads no source, and only the rest copied (~0.5 MB of a 1.6 MB image); finding them is a
  // scan of the image, done once. A snapshot restored once (a parked run) is copied whole.
  const dst = new Uint8Array(memory.buffer);
  const image = snapshot.memory;
  const exports = vm._getExports() as unknown as EngineExports;
  const runs = repeated ? cachedPageRuns(image) : zeroRuns.get(image);
  const prefix = runs ? zeroPrefixOf(runs) : 0;
  if (!runs) dst.set(image);
  else {
    const from = Math.min(prefix, knownZeroBelow(vm, exports));
    // [0, from) is zero in the image (its prefix); the null guard is written whatever the mark says.
    dst.fill(0, 0, Math.min(from, NULL_GUARD_BYTES));
    for (let i = 0; i < runs.length; i += 3) {
      const start = Math.max(runs[i]!, from);
      const end = runs[i + 1]!;
      if (start >= end) continue;
      if (runs[i + 2] === 1) dst.fill(0, start, end);
      else dst.set(image.subarray(start, end), start);
    }
  }
  dst.fill(0, image.byteLength);
  exports.qjs_set_runtime_and_context(snapshot.runtimePtr, snapshot.contextPtr);
  settled(vm, exports, snapshot.stackPointer, prefix);
  internals.applyLimits(vm, internals.normalizeOptions(options));
  return true;
}

/**
 * Per image: [start, end, zero (1) or not (0), …] covering it, in 4 KiB pages (see `resetToImage`).
 * Keyed by the image's object, so an image must never change once reset to (stale runs would fill data
 * pages with zeros): the pool's are private copies (buildPristineVm's slice, a snapshot's own copy).
 */
const zeroRuns = new WeakMap<Uint8Array, number[]>();

function pageRuns(image: Uint8Array): number[] {
  const aligned = image.byteOffset % 4 === 0;
  const words = aligned ? new Uint32Array(image.buffer, image.byteOffset, image.byteLength >> 2) : null;
  const isZero = (from: number, to: number): boolean => {
    let i = from;
    if (words) for (; i + 4 <= to; i += 4) if (words[i >> 2] !== 0) return false;
    for (; i < to; i++) if (image[i] !== 0) return false;
    return true;
  };
  const runs: number[] = [];
  for (let start = 0; start < image.byteLength; start += PAGE_BYTES) {
    const end = Math.min(image.byteLength, start + PAGE_BYTES);
    const zero = isZero(start, end) ? 1 : 0;
    const last = runs.length - 3;
    if (last >= 0 && runs[last + 2] === zero) runs[last + 1] = end;
    else runs.push(start, end, zero);
  }
  return runs;
}

/** The image's page runs, found once per image object. */
function cachedPageRuns(image: Uint8Array): number[] {
  let runs = zeroRuns.get(image);
  if (!runs) {
    runs = pageRuns(image);
    zeroRuns.set(image, runs);
  }
  return runs;
}

/** How many of an image's first bytes are zeros, in whole pages (see `zeroBelow`): its first run, when a zero run. */
function zeroPrefixOf(runs: number[]): number {
  return runs[2] === 1 ? runs[1]! : 0;
}

function differingRuns(image: Uint8Array, fresh: Uint8Array): number[] {
  // Compared a word at a time where both views allow it (a once-per-image scan of the whole image).
  const aligned = image.byteOffset % 4 === 0 && fresh.byteOffset % 4 === 0;
  const a = aligned ? new Uint32Array(image.buffer, image.byteOffset, image.byteLength >> 2) : null;
  const b = aligned ? new Uint32Array(fresh.buffer, fresh.byteOffset, fresh.byteLength >> 2) : null;
  const differs = (from: number, to: number): boolean => {
    let i = from;
    if (a && b) for (; i + 4 <= to; i += 4) if (a[i >> 2] !== b[i >> 2]) return true;
    for (; i < to; i++) if (image[i] !== fresh[i]) return true;
    return false;
  };
  const runs: number[] = [];
  const pages = Math.ceil(image.byteLength / PAGE_BYTES);
  let start = -1;
  for (let page = 0; page <= pages; page++) {
    const changed = page < pages && differs(page * PAGE_BYTES, Math.min(image.byteLength, (page + 1) * PAGE_BYTES));
    if (changed && start < 0) start = page * PAGE_BYTES;
    else if (!changed && start >= 0) {
      runs.push(start, Math.min(image.byteLength, page * PAGE_BYTES));
      start = -1;
    }
  }
  return runs;
}
