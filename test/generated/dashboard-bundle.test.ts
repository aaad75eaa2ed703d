import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { buildDashboard, DASHBOARD_OUT } from "../../scripts/build-dashboard.ts";

/**
 * dashboard/dist/ is generated from dashboard/src/ by `npm run build:dashboard` and committed, so
 * that Mintlens serves its dashboard with nothing to build. Building again must give the committed
 * files byte for byte: a change to the sources, to the build script or to a bundled package that was
 * not built again fails here.
 */
describe("the committed dashboard bundle is that of dashboard/src", () => {
  test("a fresh build writes exactly the committed dashboard/dist/", async () => {
    const fresh = await buildDashboard();
    const committed = readdirSync(DASHBOARD_OUT).sort();
    assert.deepEqual(
      committed,
      [...fresh.keys()],
      "the committed files are not the built ones; run npm run build:dashboard",
    );
    for (const [name, text] of fresh) {
      const same = readFileSync(join(DASHBOARD_OUT, name), "utf8") === text;
      assert.ok(same, `dashboard/dist/${name} is stale; run npm run build:dashboard`);
    }
  });

  test("the page names its script and style sheet, and loads nothing from another host", async () => {
    const html = readFileSync(join(DASHBOARD_OUT, "index.html"), "utf8");
    const named = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    const assets = readdirSync(DASHBOARD_OUT).filter((name) => name !== "index.html");
    for (const asset of assets) assert.ok(named.includes(`/dashboard/${asset}`), `index.html names ${asset}`);
    for (const url of named) assert.ok(url?.startsWith("/") || url === "data:,", `${url} is on this server`);
    for (const asset of assets) {
      const text = readFileSync(join(DASHBOARD_OUT, asset), "utf8");
      assert.doesNotMatch(
        text,
        /url\(\s*["']?(?:https?:)?\/\//,
        `${asset} loads a style resource from another host`,
      );
      assert.doesNotMatch(text, /@import/, `${asset} imports a style sheet`);
    }
  });
});
