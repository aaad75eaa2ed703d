/**
 * The test files, by tier, and what each one reaches through its imports: what scripts/test.ts
 * picks the files of a run by, and what test/unit/test-tiers.test.ts keeps each file's tier true to.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

export const TIERS = ["unit", "integration", "process", "browser", "generated"] as const;
export type Tier = (typeof TIERS)[number];

export const TIER_CONTENTS: Record<Tier, string> = {
  unit: "pure code: no anvil, no PostgreSQL, no server, no child process",
  integration: "anvil, PostgreSQL and servers on loopback, all from the test's own process",
  process: "the mintlens command run as a child process: signals, exit codes, kill -9, the real start",
  browser: "the dashboard in headless Chromium, against an API on loopback over indexed demo data",
  generated:
    "committed generated files (contract artifacts, src/gen, openapi, dashboard/dist) are those of their sources",
};

/** What makes a file use the test database server: MINTLENS_TEST_DATABASE_URL or the embedded one. */
export const TEST_DATABASE = "test/support/database.ts";

/** Every test file of a tier, relative to the root, in a stable order. */
export function tierFiles(tier: Tier): string[] {
  const dir = join(ROOT, "test", tier);
  return existsSync(dir) ? testFilesUnder(dir).map((path) => relative(ROOT, path)) : [];
}

/** Test files outside every tier (a tier runs only its own folder, so these would never run). */
export function filesOutsideTiers(): string[] {
  const tiers = new Set(TIERS.map((tier) => join(ROOT, "test", tier)));
  const skip = new Set([...tiers, join(ROOT, "test", "fixtures"), join(ROOT, "test", "support")]);
  return testFilesUnder(join(ROOT, "test"), skip).map((path) => relative(ROOT, path));
}

function testFilesUnder(dir: string, skip: ReadonlySet<string> = new Set()): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (skip.has(path)) continue;
    if (statSync(path).isDirectory()) files.push(...testFilesUnder(path, skip));
    else if (name.endsWith(".test.ts")) files.push(path);
  }
  return files;
}

// Static and dynamic imports and re-exports; `import type` brings no code, so it is left out.
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?!type\s)(?:[^"'`;]*?\sfrom\s*)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** The modules `file` imports: project files as paths relative to the root, packages and built-ins by name. */
export function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2];
    if (specifier === undefined) continue;
    if (!specifier.startsWith(".")) {
      found.push(specifier);
      continue;
    }
    const path = resolve(dirname(join(ROOT, file)), specifier);
    if (existsSync(path) && statSync(path).isFile()) found.push(relative(ROOT, path));
  }
  return found;
}

/** Every module reachable from `file` through its imports, project files followed, `file` included. */
export function reachable(file: string): Set<string> {
  const seen = new Set<string>([file]);
  const queue = [file];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const imported of importsOf(next)) {
      if (seen.has(imported)) continue;
      seen.add(imported);
      if (isProjectFile(imported)) queue.push(imported);
    }
  }
  return seen;
}

function isProjectFile(module: string): boolean {
  if (module.startsWith("node:") || !/\.(ts|mts|js|mjs)$/.test(module)) return false;
  const path = join(ROOT, module);
  return existsSync(path) && statSync(path).isFile();
}

/** Whether a test file opens databases on the test server, so that its results depend on that server. */
export function usesTestDatabase(file: string): boolean {
  return reachable(file).has(TEST_DATABASE);
}
