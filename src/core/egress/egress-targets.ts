/**
 * What kind of network a URL's host names, judged from the host text alone (the Workers runtime
 * has no resolver to ask): IP literals by their ranges, and the names that never mean a public
 * host (`localhost`, `*.localhost`, `*.local`, `*.internal`, `*.lan`, `*.home.arpa`, and single-label
 * names such as a compose service `ollama`). WHATWG URL parsing has already normalised numeric IPv4
 * spellings (`0x7f.1`, `2130706433`) to dotted quads and IPv6 to its compressed form, so a literal
 * cannot hide behind another notation. A public name that resolves to a private address is not
 * caught here; see docs/decisions/egress-door-and-deployment-mode.md.
 */
export type TargetClass = "public" | "loopback" | "private" | "link_local";

const PRIVATE_SUFFIXES = [".local", ".internal", ".lan", ".home.arpa", ".intranet", ".corp"];

export function targetClass(hostname: string): TargetClass {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[")) return ipv6Class(host.slice(1, -1));
  const quad = ipv4(host);
  if (quad) return ipv4Class(quad);
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  if (!host.includes(".") || PRIVATE_SUFFIXES.some((suffix) => host.endsWith(suffix))) return "private";
  return "public";
}

/** Loopback names and literals (127/8, ::1, localhost). */
export function isLoopbackHost(hostname: string): boolean {
  return targetClass(hostname) === "loopback";
}

function ipv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return null;
  const quad = parts.map(Number);
  return quad.every((n) => n <= 255) ? quad : null;
}

function ipv4Class([a, b]: number[]): TargetClass {
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link_local";
  // 0/8 "this network", 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT), 198.18/15 (benchmarking), 224+/4 multicast and reserved.
  if (a === 0 || a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168) || (a === 100 && b! >= 64 && b! <= 127) || (a === 198 && (b === 18 || b === 19)) || a! >= 224) {
    return "private";
  }
  return "public";
}

function ipv6Class(literal: string): TargetClass {
  const groups = expandIpv6(literal);
  if (!groups) return "private";
  if (groups.slice(0, 7).every((g) => g === 0)) return groups[7] === 1 ? "loopback" : "private";
  // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64) carry an IPv4 target in their last 32 bits.
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (mapped || nat64) return ipv4Class([groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff]);
  if ((groups[0]! & 0xffc0) === 0xfe80) return "link_local";
  if ((groups[0]! & 0xfe00) === 0xfc00 || (groups[0]! & 0xffc0) === 0xfec0 || (groups[0]! & 0xff00) === 0xff00) return "private";
  return "public";
}

/** Eight 16-bit groups of a (URL-normalised) IPv6 literal, or null if it cannot be read. */
function expandIpv6(literal: string): number[] | null {
  const halves = literal.split("::");
  if (halves.length > 2) return null;
  const read = (text: string): number[] | null => {
    if (text === "") return [];
    const out: number[] = [];
    for (const part of text.split(":")) {
      const quad = part.includes(".") ? ipv4(part) : null;
      if (quad) out.push((quad[0]! << 8) | quad[1]!, (quad[2]! << 8) | quad[3]!);
      else if (/^[0-9a-f]{1,4}$/.test(part)) out.push(parseInt(part, 16));
      else return null;
    }
    return out;
  };
  const head = read(halves[0]!);
  const tail = halves.length === 2 ? read(halves[1]!) : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const fill = 8 - head.length - tail.length;
  return fill < 0 ? null : [...head, ...new Array<number>(fill).fill(0), ...tail];
}
