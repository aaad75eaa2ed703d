/**
 * Where the buf CLI is. Its npm package pulls the binary of every platform as optional packages,
 * which not every registry mirror holds; the project depends on the Linux x64 binary alone (as
 * on anvil's), and takes any other platform's binary package if installed, or `buf` on the PATH.
 * Usage: node --import tsx scripts/buf.ts <buf arguments> (npm run gen:proto runs lint, then generate).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const PLATFORMS: Record<string, string> = {
  "linux-x64": "linux-x64",
  "linux-arm64": "linux-aarch64",
  "darwin-x64": "darwin-x64",
  "darwin-arm64": "darwin-arm64",
  "win32-x64": "win32-x64",
  "win32-arm64": "win32-arm64",
};

/** The buf binary of this platform from node_modules, or `buf` from the PATH. */
export function bufBinary(): string {
  const platform = PLATFORMS[`${process.platform}-${process.arch}`];
  if (platform) {
    const binary = join(ROOT, "node_modules", "@bufbuild", `buf-${platform}`, "bin", "buf");
    if (existsSync(binary)) return binary;
    if (existsSync(`${binary}.exe`)) return `${binary}.exe`;
  }
  return "buf";
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = spawnSync(bufBinary(), process.argv.slice(2), { cwd: ROOT, stdio: "inherit" });
  if (result.error) {
    process.stderr.write(
      `buf: ${result.error.message} (install @bufbuild/buf-<platform> or put buf on the PATH)\n`,
    );
    process.exit(1);
  }
  process.exit(result.status ?? 1);
}
