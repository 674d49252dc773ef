import { JSException } from "quickjs-wasi";
import type { InterruptGuard } from "./interrupt-guard";

/** Why a guest call could not finish. */
export type GuestFault =
  | { kind: "interrupted" }
  /** `isolate`: refused by the isolate's VM memory budget (its description), not by the VM's own cap. */
  | { kind: "out_of_memory"; isolate?: string }
  /** An uncatchable engine error the program caused (string too long, stack overflow). */
  | { kind: "engine_limit"; detail: string }
  | { kind: "crashed"; detail: string };

export class GuestFaultError extends Error {
  constructor(readonly fault: GuestFault) {
    super(fault.kind);
  }
}

/** Map what a guest call threw to a fault; engine messages are read from QuickJS's own errors. */
export function classify(error: unknown, guard: InterruptGuard | null): GuestFault {
  if (error instanceof JSException) {
    if (guard?.reason != null || error.message === "interrupted") return { kind: "interrupted" };
    if (error.message === "out of memory") return { kind: "out_of_memory" };
    // Anything else QuickJS raised past the guest's try/catch is an engine limit the guest
    // program reached (catchable errors never get here): the program's error, not ours.
    return { kind: "engine_limit", detail: `${error.name}: ${error.message}` };
  }
  if (guard?.reason != null) return { kind: "interrupted" };
  // A wasm trap (e.g. the native stack running out) leaves the instance unusable.
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (/out of memory|memory access out of bounds|Cannot allocate/i.test(detail)) return { kind: "out_of_memory" };
  // The host's native stack ran out under deep guest recursion.
  if (error instanceof RangeError && /call stack/i.test(detail)) return { kind: "engine_limit", detail };
  return { kind: "crashed", detail };
}
