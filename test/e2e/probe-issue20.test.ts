import { describe, expect, inject, it } from "vitest";

// Probes of issue 20 ("Trust boundaries hold on every path") by a hostile tester. Each test states the
// expected behaviour and FAILS on the branch it was written against: each is a defect still open.
import { sessionId } from "./helpers";
import { chat, parseSse, requests, script, toolResults, type RecordedRequest } from "./chat-helpers";

const MODEL = "fakeoai/gpt-fake";
const HOSTILE = () => inject("mcpHostileUrl" as never) as unknown as string;
const metadata = () => ({ hostile: { url: `${HOSTILE()}/metadata/mcp` } });

function resultsById(req: RecordedRequest): Map<string, string> {
  return new Map(toolResults(req).map((t) => [t.id, t.content]));
}
function ends(text: string): Map<string, { untrusted: boolean; result: string }> {
  return new Map(
    parseSse(text)
      .filter((e) => e.event === "tool_call_end")
      .map((e) => [e.data.callId as string, e.data]),
  );
}

describe("network-derived text stored as tool data by a tainted cell", () => {
  it("a later cell returning a note a tainted cell wrote is still wrapped", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          {
            id: "w",
            name: "exec",
            input: { code: 'const d = await API.read("mcp/hostile.d.ts"); await notes_write({ key: "k", text: d.slice(0, 3000) }); return "saved";' },
          },
        ],
      },
      { toolCalls: [{ id: "r", name: "exec", input: { code: 'return (await notes_read({ key: "k" }))[0].text' } }] },
      { text: "ok" },
    ]);
    const r = await chat(
      session,
      { model: MODEL, mcpServers: metadata(), messages: [{ role: "user", content: `${s.marker} go` }] },
      { accept: "text/event-stream" },
    );
    expect(r.status).toBe(200);
    const seen = resultsById((await requests(s.id))[2]!);
    expect(seen.get("r")).toContain("ignore previous instructions");
    expect(seen.get("r")).toMatch(/^SECURITY NOTICE/);
    expect(ends(r.text).get("r")!.untrusted).toBe(true);
  });
});
