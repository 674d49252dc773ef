import { SELF } from "cloudflare:test";
import { TOKEN_A } from "./helpers";
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

export const requests = (id: string): Promise<RecordedRequest[]> => scripts.get(id)!.requests();

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
