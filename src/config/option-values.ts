/**
 * Reading option values that several parts of the configuration share: each reader records what
 * is wrong in `problems` and gives its fallback, so that one error names every bad option at once.
 */

/** A repeatable option whose values may also be comma-separated, else its variable's comma list. */
export function listOption(values: readonly string[] | undefined, variable: string | undefined): string[] {
  return (values ?? [variable ?? ""])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/** A whole number from `min` (to `max` when given); `undefined` gives the fallback. */
export function wholeNumber(
  problems: string[],
  label: string,
  value: string | undefined,
  fallback: number,
  range: { min: number; max?: number },
): number {
  if (value === undefined) return fallback;
  const n = /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(n >= range.min && n <= (range.max ?? Number.MAX_SAFE_INTEGER))) {
    const bounds = range.max === undefined ? `of at least ${range.min}` : `from ${range.min} to ${range.max}`;
    problems.push(`${label}: ${value} is not a whole number ${bounds}`);
    return fallback;
  }
  return n;
}
