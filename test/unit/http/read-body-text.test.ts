import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../src/errors";
import { readBodyText } from "../../../src/http";

// A body read that breaks off is the client's failure (400), not the gateway's (500): the
// connection closed before the body was whole. The gateway's own failures keep their kind.

describe("readBodyText", () => {
  it("gives the text a read returns", async () => {
    await expect(readBodyText(async () => '{"a":1}')).resolves.toBe('{"a":1}');
  });

  it("turns a read that breaks off (the runtime's 'Network connection lost.') into 400 invalid_request", async () => {
    const error = await readBodyText(() => Promise.reject(new Error("Network connection lost."))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe("invalid_request");
    expect((error as GatewayError).message).toBe("the request body could not be read whole: the connection closed before it ended");
  });

  it("passes a TypeError (the body read twice: a gateway bug) and the gateway's own refusals through unchanged", async () => {
    const used = new TypeError("Body has already been used");
    await expect(readBodyText(() => Promise.reject(used))).rejects.toBe(used);
    const tooLarge = new GatewayError("payload_too_large", "request body exceeds 1048576 bytes");
    await expect(readBodyText(() => Promise.reject(tooLarge))).rejects.toBe(tooLarge);
  });
});
