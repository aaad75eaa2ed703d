/**
 * Moves test files with `git mv` and rewrites every relative path that the move changes: the moved
 * files' imports and `new URL(…, import.meta.url)` paths, and the imports of the moved files by
 * others under test/ and scripts/.
 * Usage: node --import tsx scripts/move-tests.ts <file> <tier or folder> [<file> <tier or folder> …]
 *   e.g. scripts/move-tests.ts test/api-paging.test.ts integration
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { ROOT, TIERS } from "./test-files.ts";

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2 !== 0) {
  process.stderr.write("usage: node --import tsx scripts/move-tests.ts <file> <tier or folder> [...]\n");
  process.exit(2);
}
const moves = new Map<string, string>();
for (let i = 0; i < args.length; i += 2) {
  const from = resolve(args[i] as string);
  const to = args[i + 1] as string;
  const folder = (TIERS as readonly string[]).includes(to) ? join(ROOT, "test", to) : resolve(to);
  moves.set(from, join(folder, basename(from)));
}

// A relative specifier or URL path, up to the end of its string or the first `${`.
const RELATIVE =
  /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*|import\.meta\.dirname,\s*)(["'`])(\.{0,2}\/?[^"'`$]*)/g;

function rewrite(file: string): void {
  const before = file;
  const after = moves.get(file) ?? file;
  const text = readFileSync(file, "utf8");
  const out = text.replace(RELATIVE, (all, lead: string, quote: string, path: string) => {
    const dirnameJoin = lead.startsWith("import.meta.dirname");
    if (!dirnameJoin && !path.startsWith(".")) return all;
    const target = resolve(dirname(before), path);
    const moved = moves.get(target) ?? target;
    if (after === before && moved === target) return all;
    let rewritten = relative(dirname(after), moved) || ".";
    if (!dirnameJoin && !rewritten.startsWith(".")) rewritten = `./${rewritten}`;
    if (path.endsWith("/") && !rewritten.endsWith("/")) rewritten += "/";
    return `${lead}${quote}${rewritten}`;
  });
  if (out !== text) writeFileSync(file, out);
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "fixtures" || name === "node_modules") return [];
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mts)$/.test(name) ? [path] : [];
  });
}

for (const file of [...sources(join(ROOT, "test")), ...sources(join(ROOT, "scripts"))]) rewrite(file);
for (const [from, to] of moves) {
  mkdirSync(dirname(to), { recursive: true });
  execFileSync("git", ["mv", relative(ROOT, from), relative(ROOT, to)], { cwd: ROOT });
  process.stdout.write(`${relative(ROOT, from)} -> ${relative(ROOT, to)}\n`);
}
