/** Rows under a header, columns aligned by two spaces, trailing spaces trimmed: what listings print. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]?.length ?? 0)));
  return table
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}
