import { QuickJS } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../wasm/quickjs";
import { GUEST_CONTROL, GUEST_PRELUDE } from "./guest-prelude";

/**
 * The prelude compiled once per isolate, always in a throwaway VM, so every isolate gets the
 * same bytes and cell VMs share their memory layout with the pristine snapshot image.
 */
let bytecode: Promise<PreludePrograms> | undefined;

/**
 * `prelude` installs the guest half of the bridge; `hideControl` then removes the control object
 * from the guest's globals once the host holds it. Both compiled: a cell's VM never runs the parser
 * before the cell's own code.
 */
export type PreludePrograms = { prelude: Uint8Array; hideControl: Uint8Array };

export async function preludeBytecode(): Promise<Uint8Array> {
  return (await preludePrograms()).prelude;
}

export function preludePrograms(): Promise<PreludePrograms> {
  bytecode ??= compilePrelude().catch((error) => {
    bytecode = undefined;
    throw error;
  });
  return bytecode;
}

/** Tests only: forget the compiled prelude, as a fresh isolate would not have it. */
export function resetPreludeBytecodeForTests(): void {
  bytecode = undefined;
}

async function compilePrelude(): Promise<PreludePrograms> {
  const vm = await QuickJS.create({ wasm: QUICKJS_MODULE });
  try {
    return {
      prelude: vm.compile(GUEST_PRELUDE, "<codemode-prelude>"),
      hideControl: vm.compile(`delete globalThis.${GUEST_CONTROL}`, "<eval>"),
    };
  } finally {
    vm.dispose();
  }
}

/** A frozen clock and zero randomness: the pristine image is the same bytes everywhere. */
export const frozenWasi = (memory: WebAssembly.Memory) => ({
  clock_time_get(_id: number, _precision: bigint, resultPtr: number) {
    new DataView(memory.buffer).setBigUint64(resultPtr, 0n, true);
    return 0;
  },
  random_get(ptr: number, len: number) {
    new Uint8Array(memory.buffer, ptr, len).fill(0);
    return 0;
  },
});
