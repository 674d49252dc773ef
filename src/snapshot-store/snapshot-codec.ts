import { QuickJS, type Snapshot } from "quickjs-wasi";

/**
 * Snapshot bytes for storage: QuickJS's versioned serialization, gzip-compressed.
 * A snapshot is the VM's whole linear memory (1.4 MB for a fresh VM), mostly zeros and
 * repeated structure, so it compresses ~10×.
 */
export function serializeSnapshot(snapshot: Snapshot): Uint8Array {
  return QuickJS.serializeSnapshot(snapshot);
}

export async function compress(raw: Uint8Array): Promise<Uint8Array> {
  return collect(new Blob([raw]).stream().pipeThrough(new CompressionStream("gzip")));
}

export async function decompress(bytes: Uint8Array): Promise<Uint8Array> {
  return collect(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")));
}

export function deserializeSnapshot(raw: Uint8Array): Snapshot {
  return QuickJS.deserializeSnapshot(raw);
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
