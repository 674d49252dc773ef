/**
 * Is an MCP server URL's host a local or private address? A per-turn server is named by the API
 * caller, and the gateway connects to it: without this check a caller could make the gateway reach
 * hosts only it can reach (its loopback, its LAN, a cloud metadata address) — in a self-hosted
 * workerd above all; Cloudflare's edge cannot route to private ranges anyway.
 *
 * RULES (hosts as the URL parser normalizes them: `0x7f.1` and `2130706433` are `127.0.0.1`):
 * - names: `localhost` and `*.localhost` (with or without a trailing dot);
 * - IPv4: 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.168/16, 198.18/15,
 *   224/4 and above (multicast, reserved, broadcast);
 * - IPv6: `::`, `::1`, fc00::/7, fe80::/10, ff00::/8, and IPv4-mapped or -translated addresses
 *   (`::ffff:a.b.c.d`, `64:ff9b::a.b.c.d`) by their IPv4 rule.
 * A public name that resolves to a private address is not caught: a Worker cannot resolve names.
 */
export function privateAddress(url: URL): string | undefined {
  // A trailing dot names the same host (`localhost.`); the URL parser keeps it on names.
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "a localhost name";
  if (host.startsWith("[") && host.endsWith("]")) return privateIpv6(host.slice(1, -1));
  const v4 = ipv4(host);
  return v4 ? privateIpv4(v4) : undefined;
}

function ipv4(host: string): number[] | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p))) return undefined;
  const n = parts.map(Number);
  return n.every((x) => x <= 255) ? n : undefined;
}

function privateIpv4([a, b, c]: number[]): string | undefined {
  const x = a!;
  const y = b!;
  if (x === 0 || x === 10 || x === 127 || x >= 224) return "a private, loopback or reserved IPv4 address";
  if ((x === 100 && y >= 64 && y <= 127) || (x === 169 && y === 254) || (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168))
    return "a private or link-local IPv4 address";
  if ((x === 192 && y === 0 && c === 0) || (x === 198 && (y === 18 || y === 19))) return "a reserved IPv4 address";
  return undefined;
}

function privateIpv6(host: string): string | undefined {
  const groups = expandIpv6(host);
  if (!groups) return "an IPv6 address that could not be read";
  if (groups.every((g) => g === 0)) return "the unspecified IPv6 address";
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return "the IPv6 loopback address";
  const first = groups[0]!;
  if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00)
    return "a private, link-local or multicast IPv6 address";
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const translated = first === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (mapped || translated) return privateIpv4([groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff]);
  return undefined;
}

/** Eight 16-bit groups of an IPv6 address as the URL parser writes it (compressed, hex; a dotted tail is already hex). */
function expandIpv6(host: string): number[] | undefined {
  const halves = host.split("::");
  if (halves.length > 2) return undefined;
  const read = (s: string) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = read(halves[0]!);
  const tail = halves.length === 2 ? read(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const all = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return all.length === 8 && all.every((g) => Number.isInteger(g)) ? all : undefined;
}
