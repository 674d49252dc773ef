import { QuickJS } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../wasm/quickjs";
import { frozenWasi } from "../runtime";
import { sha256Hex } from "./digest";

/**
 * The engine's own initial memory: a bare QuickJS VM (no prelude, no host callbacks) with a
 * frozen clock and zero randomness. It depends on the engine build alone, never on host code
 * or the prelude, so it serves two purposes:
 * - the engine's identity: snapshot memory only means something to the engine that wrote it
 *   (struct layouts, function-table indices), so a snapshot records the engine id and a build
 *   on another engine refuses it instead of restoring garbage;
 * - a base that every build on the same engine rebuilds for itself: snapshots and registry
 *   images XOR-ed against it need nothing from the build that wrote them.
 *
 * The options below are part of the identity: changing them changes every engine id and
 * fails every parked run as if the engine had been upgraded. Do not touch them.
 */
export type EngineImage = { memory: Uint8Array; id: string };

const ENGINE_IMAGE_OPTIONS = { memoryLimit: 67108864, maxStackSize: 256 * 1024, timezoneOffset: 0 } as const;

let engine: Promise<EngineImage> | undefined;

/** The isolate's engine image (built once, on first park or restore). */
export function engineImage(): Promise<EngineImage> {
  engine ??= buildEngineImage().catch((error) => {
    engine = undefined;
    throw error;
  });
  return engine;
}

/** Build without the per-isolate cache (tests prove it is the same every time, and the same on quickjs-wasi's own build of the engine). */
export async function buildEngineImage(wasm: WebAssembly.Module = QUICKJS_MODULE): Promise<EngineImage> {
  const vm = await QuickJS.create({ wasm, wasi: frozenWasi, ...ENGINE_IMAGE_OPTIONS });
  try {
    const memory = vm.snapshot().memory.slice();
    const versions = vm.versions;
    // The package and engine versions make the refusal message readable; the memory hash
    // catches a rebuilt wasm that kept its version numbers.
    const hash = (await sha256Hex(memory)).slice(0, 16);
    return { memory, id: `quickjs-wasi ${versions["quickjs-wasi"]} (quickjs ${versions.quickjs}, image ${hash})` };
  } finally {
    vm.dispose();
  }
}
