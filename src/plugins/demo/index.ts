import { defineToolPlugin } from "../../tools";
import { SHIPMENTS } from "./shipments";

const Shipment = {
  type: "object",
  properties: { id: { type: "string" }, paid: { type: "boolean" }, tons: { type: "number" } },
  required: ["id", "paid", "tons"],
  additionalProperties: false,
};

const NOTE_PREFIX = "note:";
const MAX_NOTE_CHARS = 16_384;

/**
 * The demo catalog shipped with the gateway: the seed's `shipping_list` example plus a few
 * tools worth having at the edge (durable per-session notes, a delayed echo for slow work).
 */
export const demoPlugin = defineToolPlugin({
  id: "demo",
  name: "Demo",
  description: "Shipment, note and echo tools for trying code mode.",
  origin: "bundled",
  tools: (tool) => [
    tool({
      name: "shipping_list",
      replaySafe: true,
      label: "List shipments",
      description: "List shipments with their id, paid flag and weight in tons.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      outputSchema: { type: "array", items: Shipment },
      execute: () => SHIPMENTS.map((s) => ({ ...s })),
    }),
    tool({
      name: "shipping_get",
      replaySafe: true,
      label: "Get shipment",
      description: "Get one shipment by id; fails when the id is unknown.",
      parameters: {
        type: "object",
        properties: { id: { type: "string", minLength: 1 } },
        required: ["id"],
        additionalProperties: false,
      },
      outputSchema: Shipment,
      execute: ({ id }: { id: string }) => {
        const found = SHIPMENTS.find((s) => s.id === id);
        if (!found) throw new Error(`shipment ${id} not found`);
        return { ...found };
      },
    }),
    tool({
      name: "notes_write",
      label: "Write note",
      description: "Save a text note under a key in this session's durable storage.",
      parameters: {
        type: "object",
        properties: {
          key: { type: "string", minLength: 1, maxLength: 128 },
          text: { type: "string", maxLength: MAX_NOTE_CHARS },
        },
        required: ["key", "text"],
        additionalProperties: false,
      },
      outputSchema: {
        type: "object",
        properties: { key: { type: "string" }, bytes: { type: "integer", minimum: 0 } },
        required: ["key", "bytes"],
        additionalProperties: false,
      },
      execute: async ({ key, text }: { key: string; text: string }, ctx) => {
        await ctx.store.put(NOTE_PREFIX + key, text);
        return { key, bytes: new TextEncoder().encode(text).length };
      },
    }),
    tool({
      name: "notes_read",
      replaySafe: true,
      label: "Read notes",
      description: "Read one note by key, or list notes whose key starts with a prefix.",
      parameters: {
        type: "object",
        properties: {
          key: { type: "string", minLength: 1, maxLength: 128 },
          prefix: { type: "string", maxLength: 128 },
          limit: { type: "integer", minimum: 1, maximum: 100 },
        },
        additionalProperties: false,
      },
      outputSchema: {
        type: "array",
        items: {
          type: "object",
          properties: { key: { type: "string" }, text: { type: "string" } },
          required: ["key", "text"],
          additionalProperties: false,
        },
      },
      execute: async ({ key, prefix, limit }: { key?: string; prefix?: string; limit?: number }, ctx) => {
        if (key !== undefined) {
          const text = await ctx.store.get(NOTE_PREFIX + key);
          return typeof text === "string" ? [{ key, text }] : [];
        }
        const rows = await ctx.store.list(NOTE_PREFIX + (prefix ?? ""), limit ?? 20);
        return rows.map((r) => ({ key: r.key.slice(NOTE_PREFIX.length), text: String(r.value) }));
      },
    }),
    tool({
      name: "echo",
      replaySafe: true,
      label: "Echo",
      description: "Return the given value, optionally after a delay in milliseconds (simulates slow work; reports progress halfway).",
      parameters: {
        type: "object",
        properties: {
          value: {},
          delayMs: { type: "integer", minimum: 0, maximum: 600000 },
        },
        additionalProperties: false,
      },
      execute: async ({ value, delayMs }: { value?: unknown; delayMs?: number }, ctx) => {
        if (delayMs) {
          await sleep(Math.floor(delayMs / 2), ctx.signal);
          ctx.update?.({ progress: 0.5, waitedMs: Math.floor(delayMs / 2) });
          await sleep(delayMs - Math.floor(delayMs / 2), ctx.signal);
        }
        return value ?? null;
      },
    }),
  ],
});

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("cancelled"));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("cancelled"));
    });
  });
}
