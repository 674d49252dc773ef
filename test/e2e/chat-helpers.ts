import { SELF } from "cloudflare:test";
import { expect } from "vitest";
import { api, sessionProbe, TOKEN_A } from "./helpers";
import { fakeScript, type FakeRequestRecord, type FakeStep } from "../support/fake-provider-client";

export type RecordedRequest = FakeRequestRecord;

const scripts = new Map<string, Awaited<ReturnType<typeof fakeScript>>>();

/** Registers a script on the fake provider server; its marker goes into the first user message. */
export async function script(steps: FakeStep[]): Promise<{ id: string; marker: string }> {
  const s = await fakeScript(steps);
  scripts.set(s.id, s);
  return s;
}

/** Steps added once the test knows what the model should say next (e.g. a runId). */
export const appendSteps = (id: string, steps: FakeStep[]): Promise<void> => scripts.get(id)!.append(steps);

/** The script's requests, once each has ended: it waits (≤ 5 s) for one in flight, so poll `arrived` instead. */
export const requests = (id: string): Promise<RecordedRequest[]> => scripts.get(id)!.requests();

/** How many requests reached the script so far, ended or not: what a test polls to act while one is in flight. */
export const arrived = (id: string): Promise<number> => scripts.get(id)!.arrived();

export async function chat(session: string, body: unknown, opts: { accept?: string; token?: string } = {}) {
  const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${opts.token ?? TOKEN_A}`,
      ...(opts.accept ? { accept: opts.accept } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** Server-sent events of a response body, as `{ event, data }`. */
export function parseSse(text: string): Array<{ event: string; data: any }> {
  return (
    text
      .split("\n\n")
      // Comment-only blocks (": keep-alive" heartbeats) carry no event.
      .filter((block) => block.split("\n").some((line) => line.trim() !== "" && !line.startsWith(":")))
      .map((block) => {
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? "";
        const data = /^data: (.*)$/m.exec(block)?.[1] ?? "null";
        return { event, data: JSON.parse(data) };
      })
  );
}

/** Tool messages the provider received in a request, normalized across wire formats: [{ id, content, isError }]. */
export function toolResults(req: RecordedRequest): Array<{ id: string; content: string; isError: boolean }> {
  if (req.wire === "openai") {
    return (req.body.messages as any[])
      .filter((m) => m.role === "tool")
      .map((m) => ({ id: m.tool_call_id, content: typeof m.content === "string" ? m.content : JSON.stringify(m.content), isError: false }));
  }
  const out: Array<{ id: string; content: string; isError: boolean }> = [];
  for (const m of req.body.messages as any[]) {
    if (m.role !== "user" || !Array.isArray(m.content)) continue;
    for (const block of m.content) {
      if (block.type !== "tool_result") continue;
      const content = typeof block.content === "string" ? block.content : (block.content as any[]).map((b) => b.text ?? "").join("");
      out.push({ id: block.tool_use_id, content, isError: block.is_error === true });
    }
  }
  return out;
}

/** The tool names a request offered the model. */
export function offeredTools(req: RecordedRequest): string[] {
  return (req.body.tools ?? []).map((t: any) => t.function?.name ?? t.name);
}

/** A user message carrying a script's marker (the fake provider finds its script by it). */
export const user = (marker: string, text = "go") => [{ role: "user", content: `${marker} ${text}` }];

/** GET …/turns/:turnId/trajectory of the default tenant. */
export const trajectory = (session: string, turnId: string) => api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);

/** SQLite rows of the session object (its storage probe, test/support/session-probe.ts). */
export function rows<T = any>(session: string, query: string): Promise<T[]> {
  return sessionProbe(session).storageRows<T>(query);
}

/** An SSE /chat call read as it arrives, so a test can act mid-loop. */
export async function sseChat(session: string, body: unknown) {
  const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN_A}`, accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  return {
    status: res.status,
    async until(text: string): Promise<string> {
      while (!seen.includes(text)) {
        const r = await reader.read();
        if (r.done) break;
        seen += decoder.decode(r.value);
      }
      return seen;
    },
    async rest(): Promise<{ text: string; broken: boolean }> {
      for (;;) {
        try {
          const r = await reader.read();
          if (r.done) return { text: seen, broken: false };
          seen += decoder.decode(r.value);
        } catch {
          return { text: seen, broken: true };
        }
      }
    },
  };
}

/** No stack frames, SQL, host object names or internal ids in an answer the client reads. */
export function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/\n\s+at |SQL failed|SQLITE|\[object |RangeError|TypeError|durable-objects\//);
}

/**
 * A code-mode /chat turn of `execRounds` exec round trips then a final answer, on the fake OpenAI
 * model, with the session object's SQL statements counted through the storage probe.
 */
export async function countedChatTurn(session: string, execRounds: number) {
  const steps = [
    ...Array.from({ length: execRounds }, (_, i) => ({ toolCalls: [{ id: `x${i}`, name: "exec", input: { code: `return ${i} + 1;` } }] })),
    { text: "done" },
  ];
  const s = await script(steps);
  const probe = sessionProbe(session);
  await probe.countStatements();
  const r = await chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
  expect(r.json).toMatchObject({ status: "completed" });
  return { ...(await probe.statementCount()), turnId: r.json.turnId as string };
}
