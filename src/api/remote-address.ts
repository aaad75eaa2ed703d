/**
 * Who a request comes from, as the failed-authentication limit counts it: an IPv4 address, or
 * the /64 an IPv6 address is in (one host is commonly given a whole /64, so counting single
 * IPv6 addresses would let it try 2^64 times).
 */
import { isIPv4, isIPv6 } from "node:net";

/** The host of a grpc-js peer (`ipv4:1.2.3.4:5678`, `ipv6:[::1]:5678`, `1.2.3.4:5678`, `[::1]:5678`). */
export function peerHost(peer: string): string {
  const address = peer.replace(/^ipv[46]:/, "");
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed?.[1] !== undefined) return bracketed[1];
  const hostPort = /^([^:]+):\d+$/.exec(address);
  return hostPort?.[1] ?? address;
}

/**
 * The group an address is counted in: an IPv4 address itself (also when written as an
 * IPv4-mapped IPv6 address, as a dual-stack listener reports it), an IPv6 address's /64 as
 * `xxxx:xxxx:xxxx:xxxx::/64`, and anything else (a Unix socket) as given.
 */
export function addressGroup(address: string): string {
  const host = address.replace(/%.*$/, "");
  if (isIPv4(host)) return host;
  if (!isIPv6(host)) return address;
  const groups = ipv6Groups(host);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, `::` expanded and a dotted IPv4 tail converted. */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
