/**
 * Which addresses a metadata fetch may connect to. A token URI is written by whoever deployed the
 * contract, so it may point at the machine Mintlens runs on, its private network or its cloud's
 * metadata service: only public unicast addresses are allowed, unless an operator's allow-list
 * names the address (a local IPFS gateway, a test server).
 *
 * Refused: loopback, private and unique-local, link-local (which holds 169.254.169.254, the cloud
 * metadata address), carrier-grade NAT, multicast, broadcast, unspecified, reserved and
 * documentation ranges, in IPv4 and IPv6; an IPv6 address embedding an IPv4 one (mapped, NAT64,
 * 6to4, Teredo) is judged by the IPv4 address too. Pure.
 */
import ipaddr from "ipaddr.js";

/** An allowed address range, optionally on one port only. */
export interface AllowRule {
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  port: number | undefined;
}

/** Public addresses that serve a cloud's instance metadata all the same (Azure's wire server). */
const METADATA_SERVICES = new Set(["168.63.129.16"]);

/**
 * Allow-list entries: an address or a CIDR range, optionally with a port
 * (`127.0.0.1:8080`, `10.0.0.0/8`, `[::1]:5001`). Throws on an entry it cannot read.
 */
export function parseAllowList(entries: readonly string[]): AllowRule[] {
  return entries.map((entry) => {
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ??
      /^([^:/]+(?:\/\d+)?)(?::(\d+))?$/.exec(entry) ?? [entry, entry];
    const address = m[1] as string;
    const port = m[2] === undefined ? undefined : Number(m[2]);
    try {
      const range: [ipaddr.IPv4 | ipaddr.IPv6, number] = address.includes("/")
        ? ipaddr.parseCIDR(address)
        : (() => {
            const ip = ipaddr.parse(address);
            return [ip, ip.kind() === "ipv4" ? 32 : 128];
          })();
      return { range, port };
    } catch {
      throw new Error(`not an address or range: ${entry}`);
    }
  });
}

/** The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4, Teredo), if any. */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = ip.range();
  const bytes = ip.toByteArray();
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") {
    return ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4;
  }
  if (range === "6to4") return ipaddr.fromByteArray(bytes.slice(2, 6)) as ipaddr.IPv4;
  // Teredo keeps the client's address inverted in the last four bytes.
  if (range === "teredo") return ipaddr.fromByteArray(bytes.slice(12).map((b) => b ^ 0xff)) as ipaddr.IPv4;
  return undefined;
}

function allowedBy(ip: ipaddr.IPv4 | ipaddr.IPv6, port: number, allow: readonly AllowRule[]): boolean {
  return allow.some(
    (rule) =>
      rule.range[0].kind() === ip.kind() &&
      ip.match(rule.range as [never, number]) &&
      (rule.port === undefined || rule.port === port),
  );
}

/** Why connecting to `address:port` is refused, or undefined when it is allowed. */
export function refusal(address: string, port: number, allow: readonly AllowRule[] = []): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
  } catch {
    return `${address} is not an IP address`;
  }
  if (allowedBy(ip, port, allow)) return undefined;
  const embedded = ip.kind() === "ipv6" ? embeddedIpv4(ip as ipaddr.IPv6) : undefined;
  if (embedded !== undefined) {
    if (allowedBy(embedded, port, allow)) return undefined;
    const inner = refusal(embedded.toString(), port, []);
    if (inner !== undefined) return `${address} carries ${inner}`;
    // A well-formed embedding of a public address is as public as that address.
    return undefined;
  }
  const range = ip.range();
  if (range !== "unicast") return `${address} is a ${range} address`;
  if (METADATA_SERVICES.has(ip.toString())) return `${address} is a cloud metadata service`;
  return undefined;
}
