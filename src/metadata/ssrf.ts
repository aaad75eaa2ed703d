/**
 * Which addresses a metadata fetch may connect to. A token URI is written by whoever deployed the
 * contract, so it may point at the machine Mintlens runs on, its private network or its cloud's
 * metadata service: only public unicast addresses are allowed, unless an operator's allow-list
 * names the address (a local IPFS gateway, a test server).
 *
 * Refused: loopback, private and unique-local, link-local (which holds 169.254.169.254, the cloud
 * metadata address), carrier-grade NAT, multicast, broadcast, unspecified, reserved and
 * documentation ranges, in IPv4 and IPv6; an IPv6 address embedding an IPv4 one (mapped,
 * compatible, SIIT, NAT64, 6to4, Teredo) is judged by the IPv4 address; NAT64's local-use prefix,
 * whose gateway is on the operator's own network, is refused outright. Pure.
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

const zero = (bytes: readonly number[], from: number, to: number) =>
  bytes.slice(from, to).every((b) => b === 0);

/**
 * The IPv4 address an IPv6 one carries, if any: mapped (`::ffff:0:0/96`), compatible (`::/96`,
 * deprecated, but some stacks still route it), SIIT (`::ffff:0:0:0/96`), NAT64 (`64:ff9b::/96`),
 * 6to4 (`2002::/16`) and Teredo (`2001::/32`). Judged by the bytes, not by a range name, so no
 * form is missed because a library names it otherwise.
 */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const bytes = ip.toByteArray();
  const last4 = () => ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4;
  // `::` and `::1` are the IPv6 unspecified and loopback addresses themselves, judged as such.
  if (zero(bytes, 0, 12)) return zero(bytes, 12, 15) && (bytes[15] ?? 0) <= 1 ? undefined : last4();
  if (zero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return last4();
  if (zero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(bytes, 10, 12)) return last4();
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(bytes, 4, 12))
    return last4();
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return ipaddr.fromByteArray(bytes.slice(2, 6)) as ipaddr.IPv4;
  // Teredo keeps the client's address inverted in the last four bytes.
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && zero(bytes, 2, 4))
    return ipaddr.fromByteArray(bytes.slice(12).map((b) => b ^ 0xff)) as ipaddr.IPv4;
  return undefined;
}

/** NAT64's local-use prefix (RFC 8215): translated by a gateway of the operator's own network. */
const LOCAL_NAT64: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse("64:ff9b:1::"), 48];

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
  if (ip.kind() === "ipv6" && ip.match(LOCAL_NAT64 as [never, number]))
    return `${address} is a local-use NAT64 address`;
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
