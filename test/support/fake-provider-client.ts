import { inject } from "vitest";

import type { FakeRequestRecord, FakeStep } from "./fake-provider/types";

export type { FakeRequestRecord, FakeStep };

export type FakeScript = {
  id: string;
  /** Put this in the first user message: it routes the request to this script. */
  marker: string;
  /**
   * The script's requests so far, once each has ended (the server waits up to 5 s): never poll it
   * for a request in flight, it answers only after that request ended (use `arrived`).
   */
  requests(): Promise<FakeRequestRecord[]>;
  /** How many requests reached the script so far, ended or not (no waiting). */
  arrived(): Promise<number>;
  /** Adds steps once the test knows what the model says next (e.g. a runId). */
  append(steps: FakeStep[]): Promise<void>;
};

export function fakeProviderUrl(): string {
  return inject("fakeProviderUrl");
}

/** Registers a script on the fake provider server. */
export async function fakeScript(steps: FakeStep[]): Promise<FakeScript> {
  const base = fakeProviderUrl();
  const response = await fetch(`${base}/__scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  if (!response.ok) throw new Error(`fake provider server refused the script: ${response.status} ${await response.text()}`);
  const { scriptId } = (await response.json()) as { scriptId: string };
  return {
    id: scriptId,
    marker: `[script:${scriptId}]`,
    async append(more) {
      const r = await fetch(`${base}/__scripts/${scriptId}/steps`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ steps: more }),
      });
      if (!r.ok) throw new Error(`fake provider server: ${r.status} ${await r.text()}`);
    },
    async requests() {
      const r = await fetch(`${base}/__scripts/${scriptId}/requests`);
      if (!r.ok) throw new Error(`fake provider server: ${r.status} ${await r.text()}`);
      return (await r.json()) as FakeRequestRecord[];
    },
    async arrived() {
      const r = await fetch(`${base}/__scripts/${scriptId}/arrived`);
      if (!r.ok) throw new Error(`fake provider server: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { arrived: number }).arrived;
    },
  };
}
