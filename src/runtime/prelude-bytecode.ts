import { QuickJS } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../wasm/quickjs";
import { GUEST_PRELUDE } from "./guest-prelude";

/**
 * The prelude compiled once per isolate, always in a throwaway VM, so every isolate gets the
 * same bytes and cell VMs share their memory layout with the pristine snapshot image.
 */
let bytecode: Promise<Uint8Array> | undefined;

export function preludeBytecode(): Promise<Uint8Array> {
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

async function compilePrelude(): Promise<Uint8Array> {
  const vm = await QuickJS.create({ wasm: QUICKJS_MODULE });
  try {
    return vm.compile(GUEST_PRELUDE, "<codemode-prelude>");
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
