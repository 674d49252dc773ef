import { GUEST_PRELUDE } from "../runtime/guest-prelude";
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
    return { memory, digest: await digestOf(memory) };
  } finally {
    vm.dispose();
  }
}

/**
 * SHA-256 over the whole image and the prelude source: any change to the engine or the
 * prelude (even a few bytes) yields another digest, so old snapshots are refused, never
 * XOR-ed against the wrong base.
 */
async function digestOf(memory: Uint8Array): Promise<string> {
  const prelude = new TextEncoder().encode(GUEST_PRELUDE);
  const input = new Uint8Array(memory.length + prelude.length);
  input.set(memory);
  input.set(prelude, memory.length);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", input));
  return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}
