import { buildPristineVm, GUEST_PRELUDE, pristineVm, type PristineVm } from "../runtime";
import { sha256Hex } from "./digest";

/**
 * The memory image every cell VM starts from, rebuilt identically in any isolate: a VM
 * prepared exactly like a cell's (prelude bytecode, host callback, control handle) but with
 * a frozen clock and zero randomness (the runtime's pristine VM, which cell VMs are restored
 * from). Parked snapshots store only the pages that differ from it, so a small cell parks in
 * about 11 KB. It belongs to one build (engine, host code and prelude): its digest travels
 * with each snapshot, and the image registry keeps it by digest so builds deployed later can
 * still rebuild a snapshot parked by this one.
 */
export type PristineImage = { memory: Uint8Array; digest: string; prelude: string };

let image: Promise<PristineImage> | undefined;

export function pristineImage(): Promise<PristineImage> {
  image ??= pristineVm()
    .then(fromVm)
    .catch((error) => {
      image = undefined;
      throw error;
    });
  return image;
}

/** Build the image without the per-isolate cache (tests prove it is the same every time). */
export async function buildPristineImage(): Promise<PristineImage> {
  return fromVm(await buildPristineVm());
}

async function fromVm(vm: PristineVm): Promise<PristineImage> {
  const memory = vm.snapshot.memory;
  return { memory, digest: await pristineDigest(memory, GUEST_PRELUDE), prelude: GUEST_PRELUDE };
}

/**
 * SHA-256 over the whole image and the prelude source: any change to the engine, the host's
 * preparation or the prelude (even a few bytes) yields another digest. Unchanged since format
 * 1, so snapshots parked before images were registered still match their own build.
 */
export function pristineDigest(memory: Uint8Array, prelude: string): Promise<string> {
  return sha256Hex(memory, new TextEncoder().encode(prelude));
}
