import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { bufBinary } from "../../scripts/buf.ts";

/**
 * src/gen/ and openapi/ are generated from proto/ by `npm run gen:proto` and committed. Generating
 * again (offline: buf and both plugins run from node_modules and scripts/) must give the committed
 * files byte for byte, so a change to proto/ or to a generator that was not regenerated fails here.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUF = bufBinary();
const GENERATED = ["src/gen", "openapi"];

const run = promisify(execFile);

/** Every file under a folder, by its path relative to the folder, with its content. */
function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const path = join(current, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return files;
}

describe("the generated API code and document are those of proto/", () => {
  const out = mkdtempSync(join(tmpdir(), "mintlens-gen-"));
  after(() => rmSync(out, { recursive: true, force: true }));

  test("buf lint finds nothing in proto/", async () => {
    await run(BUF, ["lint"], { cwd: ROOT });
  });

  test("buf generate into a temporary folder writes exactly the committed src/gen/ and openapi/", async () => {
    await run(BUF, ["generate", "--output", out], { cwd: ROOT });
    for (const folder of GENERATED) {
      const fresh = tree(join(out, folder));
      const committed = tree(join(ROOT, folder));
      assert.ok(fresh.size > 0, `${folder}: nothing generated`);
      assert.deepEqual(
        [...committed.keys()],
        [...fresh.keys()],
        `${folder}: the committed files are not the generated ones; run npm run gen:proto`,
      );
      for (const [path, text] of fresh) {
        assert.ok(committed.get(path) === text, `${folder}/${path} is stale; run npm run gen:proto`);
      }
    }
  });
});
