/**
 * Section 8.1: the prompt bytes of one run of the task, from a `/chat` answer and the requests the
 * fake provider recorded, each request checked: valid for its wire format, the surface's tools
 * offered (code mode: `exec` and `wait`; direct: the 300 `workspace__*` tools), and the task's tool
 * results read back by the model. `meta.promptBytes` must equal both the recorded bodies
 * (re-serialized) and the requests' Content-Length at the server.
 */
import { roundTrips, TASK_CALLS, type ChatSurface, type ChatWire } from "./chat-task.ts";
import type { FakeRecord } from "./fake-provider.ts";

/** Prompt bytes of the task on one wire format and surface. */
export interface ChatBytes {
  wire: ChatWire;
  surface: ChatSurface;
  roundTrips: number;
  /** `meta.promptBytes` of the /chat answer. */
  promptBytes: number;
  /** The fake server's recorded bodies, re-serialized; and the requests' Content-Length at the server. */
  recordedBytes: number;
  contentLength: number | null;
  /** Per request: body bytes and the bytes of its `tools` array. */
  requests: Array<{ bytes: number; toolsBytes: number }>;
  toolsOffered: number;
  bridgeCalls: { search: number; describe: number; call: number };
}

const utf8 = (s: string): number => new TextEncoder().encode(s).length;
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** Tool results a request carried, as text, across both wire formats. */
function toolResultTexts(r: FakeRecord): string[] {
  const out: string[] = [];
  for (const m of r.body.messages as any[]) {
    if (r.wire === "openai" && m.role === "tool") out.push(typeof m.content === "string" ? m.content : JSON.stringify(m.content));
    if (r.wire === "anthropic" && m.role === "user" && Array.isArray(m.content))
      for (const b of m.content) if (b.type === "tool_result") out.push(typeof b.content === "string" ? b.content : JSON.stringify(b.content));
  }
  return out;
}

function checkRecords(surface: ChatSurface, records: FakeRecord[]): void {
  const where = `${surface} requests`;
  if (records.length !== roundTrips(surface)) throw new Error(`${where}: ${records.length}, expected ${roundTrips(surface)}`);
  const problems = records.flatMap((r) => r.problems);
  if (problems.length > 0) throw new Error(`${where}: the fake provider found problems: ${problems.join("; ")}`);
  const names: string[] = records[0]!.body.tools.map((t: any) => t.function?.name ?? t.name);
  const offered = surface === "codeMode" ? names.join(",") === "exec,wait" : names.length === 300 && names.every((n) => n.startsWith("workspace__"));
  if (!offered) throw new Error(`${where}: offered ${names.length} tools: ${names.slice(0, 5).join(", ")}`);
  // Code mode: one exec result naming the three tools; direct: one result per tool, in order.
  const results = toolResultTexts(records.at(-1)!);
  const want = surface === "codeMode" ? [TASK_CALLS.map((c) => c.tool)] : TASK_CALLS.map((c) => [c.tool]);
  const ok =
    results.length === want.length &&
    results.every((text, i) => !text.includes('"status":"failed"') && want[i]!.every((tool) => text.includes(tool)));
  if (!ok) throw new Error(`${where}: tool results the model read back: ${JSON.stringify(results).slice(0, 800)}`);
}

/** The bytes of one checked run; throws if the three byte counts disagree. */
export function bytesOf(wire: ChatWire, surface: ChatSurface, answer: any, records: FakeRecord[], contentLength: number | null): ChatBytes {
  checkRecords(surface, records);
  const requests = records.map((r) => ({ bytes: utf8(JSON.stringify(r.body)), toolsBytes: utf8(JSON.stringify(r.body.tools ?? [])) }));
  const b: ChatBytes = {
    wire,
    surface,
    roundTrips: answer.meta.assistantTurns,
    promptBytes: answer.meta.promptBytes,
    recordedBytes: sum(requests.map((r) => r.bytes)),
    contentLength,
    requests,
    toolsOffered: records[0]!.body.tools.length,
    bridgeCalls: answer.meta.bridgeCalls,
  };
  if (b.recordedBytes !== b.promptBytes || (contentLength !== null && contentLength !== b.promptBytes))
    throw new Error(`${wire} ${surface}: meta.promptBytes ${b.promptBytes}, recorded bodies ${b.recordedBytes}, Content-Length ${contentLength}`);
  return b;
}
