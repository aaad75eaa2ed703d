/**
 * Builds the dashboard (dashboard/src) into dashboard/dist: one minified script and one style
 * sheet, each named with its content's hash, and the index.html that names them. The output is
 * committed, served as it is by src/api/dashboard.ts, and checked by
 * test/generated/dashboard-bundle.test.ts to be what this script makes from the sources.
 *
 * Usage: node --import tsx scripts/build-dashboard.ts
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DASHBOARD_SOURCE = join(ROOT, "dashboard", "src");
export const DASHBOARD_OUT = join(ROOT, "dashboard", "dist");
/** The prefix src/api/dashboard.ts serves the assets under. */
const PREFIX = "/dashboard/";

/** The page itself: no inline script or style, so that the strict Content-Security-Policy holds. */
function indexHtml(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Mintlens</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${PREFIX}${style}">
<script type="module" src="${PREFIX}${script}"></script>
</head>
<body>
<div id="app"><noscript>The Mintlens dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
}

/** The bundle's files by name, made in memory: the same sources always give the same bytes. */
export async function buildDashboard(): Promise<Map<string, string>> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: join(DASHBOARD_SOURCE, "main.tsx") },
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    jsx: "automatic",
    jsxImportSource: "preact",
    tsconfig: join(ROOT, "dashboard", "tsconfig.json"),
    entryNames: "[name]-[hash]",
    outdir: DASHBOARD_OUT,
    legalComments: "none",
    // Paths enter the content hashes: a checkout whose node_modules is a link elsewhere must build
    // the same names as one whose node_modules is its own.
    preserveSymlinks: true,
    charset: "utf8",
    write: false,
    logLevel: "silent",
  });
  const files = new Map<string, string>();
  for (const file of result.outputFiles) files.set(basename(file.path), file.text);
  const names = [...files.keys()];
  const script = names.find((name) => name.endsWith(".js"));
  const style = names.find((name) => name.endsWith(".css"));
  if (script === undefined || style === undefined) throw new Error(`unexpected output: ${names.join(", ")}`);
  files.set("index.html", indexHtml(script, style));
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await buildDashboard();
  mkdirSync(DASHBOARD_OUT, { recursive: true });
  for (const name of readdirSync(DASHBOARD_OUT)) rmSync(join(DASHBOARD_OUT, name));
  for (const [name, text] of files) writeFileSync(join(DASHBOARD_OUT, name), text);
  for (const [name, text] of files) {
    process.stdout.write(`dashboard/dist/${name} ${Buffer.byteLength(text)} bytes\n`);
  }
}
