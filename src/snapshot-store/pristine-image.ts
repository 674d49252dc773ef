import { fnv1a64 } from "../catalog/opaque-id";
import { GuestVm } from "../runtime/guest-vm";

/**
 * The memory image every cell VM starts from, rebuilt identically in any isolate: a VM
 * prepared exactly like a cell's (prelude bytecode, host callback, control handle) but with
 * a frozen clock and zero randomness. Parked snapshots store only the pages that differ from
 * it, so a small cell parks in a few dozen KB. Its digest travels with each snapshot; another
 * image (another engine build) makes restore fail cleanly instead of producing a corrupt VM.
 */
export type PristineImage = { memory: Uint8Array; digest: string };

/** Cells differ from the image only in a few runtime fields when their memory limit differs. */
const IMAGE_MEMORY_LIMIT = 67108864;

let image: Promise<PristineImage> | undefined;

export function pristineImage(): Promise<PristineImage> {
  image ??= build().catch((error) => {
    image = undefined;
    throw error;
  });
  return image;
}

/** Build the image without the per-isolate cache (tests prove it is the same every time). */
export async function buildPristineImage(): Promise<PristineImage> {
  return build();
}

async function build(): Promise<PristineImage> {
  const vm = await GuestVm.prepare({ memoryLimitBytes: IMAGE_MEMORY_LIMIT }, true);
  try {
    const memory = vm.memoryImage();
    return { memory, digest: fnv1a64(sample(memory)) };
  } finally {
    vm.dispose();
  }
}

/** A cheap digest input: length plus every 64th byte (the image is deterministic). */
function sample(memory: Uint8Array): string {
  let s = `${memory.length}:`;
  for (let i = 0; i < memory.length; i += 64) s += String.fromCharCode(memory[i]!);
  return s;
}
