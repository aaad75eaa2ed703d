/** How the API's values read on the page: its decimals kept exact, its enum names made words. */

/** A decimal string rounded for reading (the API's own string is exact, and kept in the data tables). */
export function amount(value: string | null | undefined, digits = 4): string {
  if (value === null || value === undefined || value === "") return "—";
  const n = Number(value);
  if (!Number.isFinite(n)) return value;
  if (n !== 0 && Math.abs(n) < 10 ** -digits) return n.toExponential(2);
  return n.toLocaleString("en-US", { maximumFractionDigits: digits });
}

/** A count, with thousands separated. */
export function count(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  const n = Number(value);
  return Number.isSafeInteger(n) ? n.toLocaleString("en-US") : String(value);
}

/** A dollar amount. */
export function usd(value: string | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  return `$${amount(value, 2)}`;
}

/** `0x1234…abcd`: enough of an address to tell it apart; the whole one is in its link's title. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/** A token id, shortened when it is one of those 78-digit ones. */
export function shortToken(tokenId: string): string {
  return tokenId.length > 12 ? `${tokenId.slice(0, 6)}…${tokenId.slice(-4)}` : tokenId;
}

/** `LABEL_MARKETPLACE_OPENSEA` → `marketplace opensea`; the prefix is the type's name. */
export function enumWords(value: string, prefix: string): string {
  return value.replace(prefix, "").toLowerCase().replaceAll("_", " ");
}

/** A UTC time as `2026-11-27 04:37 UTC`, the way the API's times are meant (UTC). */
export function time(rfc3339: string | undefined): string {
  if (!rfc3339) return "—";
  return `${rfc3339.slice(0, 10)} ${rfc3339.slice(11, 16)} UTC`;
}

/** A time as the axis of a chart reads it, short enough for a phone: the hour, or the month and day. */
export function axisTime(seconds: number, withHours: boolean): string {
  const iso = new Date(seconds * 1000).toISOString();
  return withHours ? iso.slice(11, 16) : iso.slice(5, 10);
}
