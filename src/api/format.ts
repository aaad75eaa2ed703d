/**
 * Values as the wire shows them: exact decimals from integer base units (no floating point
 * anywhere), timestamps in the exact forms clients parse, lowercase hex. Pure.
 *
 * A value these functions refuse (a malformed number from the store, a year past 9999) is a bug,
 * not a client's fault: they throw a plain error, which the API reports as INTERNAL.
 */
import { MAX_SECONDS, MIN_SECONDS } from "./params.ts";

export { toHex } from "../core/hex.ts";

const UINT64_MAX = 2n ** 64n - 1n;

/**
 * A count for a `uint64` field, held to the field's range: protobuf-es refuses to encode a value
 * outside it, and grpc-js would answer INTERNAL for the whole call. Below zero is 0 (a history
 * indexed from a start block may not know what was held before it); past the range is the
 * range's end (an ERC-1155 may mint 2^256 − 1 units of a token). Both wire forms show the same.
 */
export function uint64(value: bigint): bigint {
  if (value < 0n) return 0n;
  return value > UINT64_MAX ? UINT64_MAX : value;
}

/** The native coin's decimals on every chain served (ETH, POL): amounts are stored in wei. */
export const NATIVE_DECIMALS = 18;

/**
 * `value` base units as a decimal of `decimals` fractional digits: `formatUnits(1500000000000000000n, 18)`
 * is `"1.5"`. No exponent, no trailing zeros, no leading zeros, `"0"` for zero, `-` for a negative value.
 */
export function formatUnits(value: bigint, decimals: number): string {
  if (!Number.isSafeInteger(decimals) || decimals < 0) throw new RangeError(`invalid decimals: ${decimals}`);
  if (value < 0n) return `-${formatUnits(-value, decimals)}`;
  if (decimals === 0) return value.toString();
  const digits = value.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

/** Wei as native coin. */
export function formatNative(wei: bigint): string {
  return formatUnits(wei, NATIVE_DECIMALS);
}

/**
 * The average price per unit, `volume / units`, in native coin: rounded down to the wei (18
 * fractional digits), like the minimum and maximum unit prices the store keeps, so that
 * min <= avg <= max always holds. `"0"` when nothing was sold.
 */
export function averageUnitPrice(volumeWei: bigint, units: bigint): string {
  if (units < 0n || volumeWei < 0n) throw new RangeError(`negative volume or units: ${volumeWei} / ${units}`);
  if (units === 0n) return "0";
  return formatNative(volumeWei / units);
}

const DECIMAL_TEXT = /^(-?)([0-9]+)(?:\.([0-9]+))?$/;

/**
 * A PostgreSQL `numeric` as the store returns it (text such as `"12.500000000000000000"`) in the
 * wire's form: `"12.5"`. Exact: digits are only dropped when they are zeros.
 */
export function formatDecimalText(text: string): string {
  const m = DECIMAL_TEXT.exec(text);
  if (m === null) throw new TypeError(`not a decimal number: ${JSON.stringify(text)}`);
  const whole = (m[2] as string).replace(/^0+(?=.)/, "");
  const fraction = (m[3] ?? "").replace(/0+$/, "");
  const magnitude = fraction === "" ? whole : `${whole}.${fraction}`;
  return m[1] === "-" && magnitude !== "0" ? `-${magnitude}` : magnitude;
}

/**
 * A sale's USD value from the store's `total_usd` (exact to 10^-18 USD). NULL (no USD rate known
 * at that block yet) is `""`: unknown, which `"0"` would misstate.
 */
export function formatUsd(text: string | null): string {
  return text === null ? "" : formatDecimalText(text);
}

/** Whole seconds since 1970-01-01T00:00:00Z of a Date (rounded down) or a number of seconds. */
function epochSeconds(value: Date | number): number {
  const seconds = value instanceof Date ? Math.floor(value.getTime() / 1000) : Math.floor(value);
  if (!Number.isFinite(seconds)) throw new RangeError(`invalid time: ${String(value)}`);
  return seconds;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * `YYYY-MM-DDTHH:MM:SSZ`, exactly: the form of time-series and mint-event timestamps. Takes a
 * Date or whole seconds since the epoch; a fraction of a second is dropped.
 */
export function formatTimestamp(value: Date | number): string {
  const seconds = epochSeconds(value);
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS)
    throw new RangeError(`year out of 0001-9999: ${seconds} s`);
  const d = new Date(seconds * 1000);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}Z`
  );
}

/**
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ`, exactly six fractional digits: the form of `indexedAt`. Takes
 * microseconds since the epoch (what the store gives as
 * `(extract(epoch from indexed_at) * 1000000)::bigint`; a JavaScript Date holds only milliseconds),
 * or a Date.
 */
export function formatIndexedAt(value: bigint | Date): string {
  if (value instanceof Date && Number.isNaN(value.getTime())) throw new RangeError("invalid Date");
  const micros = typeof value === "bigint" ? value : BigInt(value.getTime()) * 1000n;
  const fraction = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const seconds = (micros - fraction) / 1_000_000n;
  return `${formatTimestamp(Number(seconds)).slice(0, -1)}.${fraction.toString().padStart(6, "0")}Z`;
}
