import { describe, expect, it } from "vitest";

describe("privateAddress: hosts a turn's own MCP server may not name", async () => {
  const { privateAddress } = await import("../../../src/mcp/private-address");
  it.each([
    "127.0.0.1",
    "127.255.0.9",
    "0.0.0.0",
    "10.0.0.1",
    "100.64.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "192.0.0.8",
    "198.18.0.1",
    "224.0.0.1",
    "255.255.255.255",
    "[::]",
    "[::1]",
    "[fc00::1]",
    "[fe80::1]",
    "[ff02::1]",
    "[::ffff:127.0.0.1]",
    "[64:ff9b::10.0.0.1]",
    "localhost",
    "x.localhost",
  ])("%s is private", (host) => {
    expect(privateAddress(new URL(`http://${host}/`))).toBeDefined();
  });
  it.each(["8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "[2606:4700::1111]", "[::ffff:8.8.8.8]", "example.com", "localhost.example.com"])(
    "%s is public",
    (host) => {
      expect(privateAddress(new URL(`http://${host}/`))).toBeUndefined();
    },
  );
});
