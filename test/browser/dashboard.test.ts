/**
 * The dashboard in a real browser (headless Chromium through playwright-core), served by the REST
 * listener of an API over a generated history the real indexer wrote, with the indexer following
 * the chain: every page renders without console errors or failed requests, each chart has exactly
 * the points the API returns, the links lead from a ranking to a wallet, a sale made on the chain
 * shows on the open page without a reload, and axe finds no serious accessibility violation. Each
 * page's screenshot is written to .test-artifacts/dashboard/; its first render time with a warm
 * server, and the bundle's size, are printed (`# dashboard …`), not asserted.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { type Browser, chromium, type Page } from "playwright-core";
import { DASHBOARD_DIST } from "../../src/api/dashboard.ts";
import { runLiveActivity } from "../../src/demo/activity.ts";
import { startDemoMetadataServer } from "../../src/demo/metadata-server.ts";
import { DEMO_METADATA_NAMES, pointDemoMetadata } from "../../src/demo/metadata-setup.ts";
import { createBlobStore } from "../../src/media/blobs.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";
import { indexUntil } from "../support/indexing.ts";
import { startDemoMetadataWorker } from "../support/metadata-worker.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, ".test-artifacts", "dashboard");
/** Debian's Chromium; MINTLENS_CHROMIUM names another. */
const CHROMIUM = process.env.MINTLENS_CHROMIUM ?? "/usr/bin/chromium";
/** Only for a hang: a page renders in well under a second. */
const RENDER_TIMEOUT_MS = 15_000;
/** How long the live activity may take to make a sale in the open collection, and the page to show it. */
const SALE_TIMEOUT_MS = 40_000;
const SHOW_TIMEOUT_MS = 15_000;
/** How often the API reads the data version its cached answers are keyed on (the fixture's default). */
const VERSION_POLL_MS = 200;

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let f: ApiFixture;
/** The image cache the API serves and the metadata worker of the metadata test fills. */
const blobDir = mkdtempSync(join(tmpdir(), "mintlens-dashboard-blobs-"));
let browser: Browser;
let page: Page;
const stop = new AbortController();
let indexer: Promise<void>;
/** What went wrong in the browser since the last check: console errors, page errors, failed requests. */
let problems: string[] = [];
/** Every URL the page requested, and the key header of those that carried one. */
const requested: { url: string; key: string | undefined }[] = [];

interface Collection {
  contractAddress: string;
}
interface Transfer {
  blockchainEvent: { txHash: string };
  contractAddress: string;
  tokenId: string;
  sender: { address: string } | null;
  recipient: { address: string } | null;
}

/** The API's answer, read by the test itself. */
async function api<T>(path: string): Promise<T> {
  const answer = await f.rest(path);
  assert.equal(answer.status, 200, `${path}: ${answer.text}`);
  return answer.body as T;
}

function takeProblems(): string[] {
  const found = problems;
  problems = [];
  return found;
}

/** Waits until the page `name` shows its heading and nothing is still loading. */
async function rendered(name: string): Promise<void> {
  // Selectors only: a predicate would be evaluated as a string, which the page's policy refuses.
  await page.waitForSelector(`main[data-page="${name}"] h1`, { timeout: RENDER_TIMEOUT_MS });
  await page.waitForSelector("main p.status:not(.error)", { state: "detached", timeout: RENDER_TIMEOUT_MS });
}

async function go(hash: string, name: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await rendered(name);
}

/** The page loaded anew at `hash` (the key stays in the tab's session), and its time to render, in ms. */
async function firstRender(hash: string, name: string): Promise<number> {
  await page.goto(`${f.restUrl}/${hash}`);
  await page.reload();
  await rendered(name);
  return page.evaluate(() => {
    performance.mark("dashboard-rendered");
    return Math.round(performance.now());
  });
}

async function axeViolations(): Promise<string[]> {
  // Through the debugging protocol, not a script tag: the page's policy refuses inline scripts.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
    "axe.run().then((result) => result.violations)",
  );
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  f = await startApiFixture({ days: 3, seed: "dashboard", blobs: createBlobStore(blobDir) });
  // The indexer follows the chain, so that a sale made during the test reaches the API.
  indexer = indexUntil({ sql: f.sql, rpcUrl: f.anvil.url, chainId: API_CHAIN_ID, signal: stop.signal });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  observe(page);
});

/** Records what goes wrong in `watched`, and what it requests. */
function observe(watched: Page): void {
  watched.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  watched.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  watched.on("requestfailed", (r) => {
    // A fetch the page gave up on itself (the user moved on) is not a failure.
    if (r.failure()?.errorText !== "net::ERR_ABORTED")
      problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  watched.on("request", (r) => requested.push({ url: r.url(), key: r.headers()["x-api-key"] }));
}

/** Waits until the image `selector` on `on` has loaded; its natural width (0 if it never did). */
async function loadedWidth(on: Page, selector: string): Promise<number> {
  let width = 0;
  for (const deadline = Date.now() + RENDER_TIMEOUT_MS; width === 0 && Date.now() < deadline; ) {
    width = await on.evaluate<number>(`document.querySelector(${JSON.stringify(selector)}).naturalWidth`);
    if (width === 0) await new Promise((r) => setTimeout(r, 100));
  }
  return width;
}

after(async () => {
  stop.abort();
  await browser?.close();
  await indexer?.catch(() => undefined);
  await f?.close();
  rmSync(blobDir, { recursive: true, force: true });
});

describe("the dashboard in a browser", () => {
  test("asks for the key, says plainly when it is refused, and keeps it out of every URL", async () => {
    const answer = await fetch(`${f.restUrl}/`);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get("content-security-policy") ?? "", /default-src 'self'/);
    await page.goto(`${f.restUrl}/`);
    await page.fill("#api-key", "ml_0000000000000000_not-a-key");
    await page.click("button[type=submit]");
    await page.waitForSelector("#key-error", { timeout: RENDER_TIMEOUT_MS });
    assert.match(await page.innerText("#key-error"), /refused/);
    // The refusal's 401 is the one console error expected here.
    assert.ok(takeProblems().every((p) => p.includes("401")));
    await page.fill("#api-key", f.key);
    await page.click("button[type=submit]");
    await rendered("top");
    assert.equal(await page.evaluate<string | null>('sessionStorage.getItem("mintlens.apiKey")'), f.key);
    await page.waitForSelector('.live[data-live="live"]', { timeout: RENDER_TIMEOUT_MS });
    const apiCalls = requested.filter((r) => /\/v1beta2\//.test(r.url));
    assert.ok(apiCalls.length > 0);
    assert.ok(
      requested.every((r) => !r.url.includes(f.key)),
      "the key is in no URL",
    );
    assert.ok(
      apiCalls.every((r) => r.key !== undefined),
      "every API call sends a key header",
    );
    assert.deepEqual(takeProblems(), []);
  });

  test("the ranking: each row's trend has the points the API returns, and the page has no problem", async () => {
    await go("#/?metric=METRIC_SALES_VOLUME&duration=DURATION_7_DAYS", "top");
    const top = await api<{ collections: Collection[] }>(
      "/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_7_DAYS?limit=25",
    );
    assert.ok(top.collections.length > 0, "the history has sales in the last 7 days");
    assert.equal(await page.locator("table.ranking tbody tr").count(), top.collections.length);
    for (const [i, c] of top.collections.entries()) {
      const series = await api<{ dataPoints: unknown[] }>(
        `/collections/v1beta2/${c.contractAddress}/sales_volume/DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY`,
      );
      const sparkline = page.locator("table.ranking tbody tr").nth(i).locator(".sparkline");
      await sparkline.scrollIntoViewIfNeeded();
      await sparkline.and(page.locator("[data-points]")).waitFor({ timeout: RENDER_TIMEOUT_MS });
      assert.equal(Number(await sparkline.getAttribute("data-points")), series.dataPoints.length);
    }
    await screenshot("top");
    assert.deepEqual(await axeViolations(), []);
    assert.deepEqual(takeProblems(), []);
  });

  test("a collection: each chart has exactly the points the API returns, for each window asked", async () => {
    const collection = f.history.contracts.erc721.address.toLowerCase();
    const windows = [
      ["DURATION_7_DAYS", "GROUP_BY_PERIOD_1_DAY"],
      ["DURATION_1_DAY", "GROUP_BY_PERIOD_1_HOUR"],
      ["DURATION_30_DAYS", "GROUP_BY_PERIOD_1_HOUR"],
    ] as const;
    const charts = { supply: "supply", owners: "owners_count", prices: "prices", volume: "sales_volume" };
    for (const [duration, period] of windows) {
      await go(`#/collection/${collection}?duration=${duration}&period=${period}`, "collection");
      for (const [chart, operation] of Object.entries(charts)) {
        const series = await api<{ dataPoints: { timestamp: string }[] }>(
          `/collections/v1beta2/${collection}/${operation}/${duration}/${period}`,
        );
        const figure = page.locator(`figure[data-chart="${chart}"]`);
        await figure.waitFor({ timeout: RENDER_TIMEOUT_MS });
        const where = `${chart} over ${duration} by ${period}`;
        assert.equal(Number(await figure.getAttribute("data-points")), series.dataPoints.length, where);
        assert.equal(
          await figure.locator("details tbody tr").count(),
          series.dataPoints.length,
          `${where}: its table`,
        );
      }
    }
    // The pickers change the window through the URL, so that the page can be shared as it is seen.
    await page.selectOption('select:near(:text("Over the last"))', "DURATION_7_DAYS");
    await rendered("collection");
    assert.match(page.url(), /duration=DURATION_7_DAYS/);
    const sales = await api<{ nftTransfers: Transfer[] }>(
      `/foundational/v1beta2/transfers/nft?contractAddress=${collection}&labelsAny=LABEL_SALE&limit=10`,
    );
    assert.equal(await page.locator('[data-table="sales"] tbody tr').count(), sales.nftTransfers.length);
    await screenshot("collection");
    assert.deepEqual(await axeViolations(), []);
    assert.deepEqual(takeProblems(), []);
  });

  test("from a ranking row to its collection, one of its NFTs, and that NFT's owner's wallet", async () => {
    await go("#/", "top");
    const first = page.locator("table.ranking tbody tr").first().locator("a");
    const address = ((await first.getAttribute("title")) ?? "").toLowerCase();
    await first.click();
    await rendered("collection");
    assert.ok(page.url().includes(`#/collection/${address}`), page.url());
    // The README's picture (docs/images/dashboard-collection.png): the busiest collection.
    await screenshot("collection-ranked");
    const token = page.locator('[data-table="sales"] tbody tr').first().locator('a[href^="#/nft/"]');
    const href = (await token.getAttribute("href")) ?? "";
    await token.click();
    await rendered("nft");
    assert.ok(page.url().endsWith(href), page.url());
    await screenshot("nft");
    assert.deepEqual(await axeViolations(), []);
    const owner = page.locator("ul.owners a").first();
    const holder = ((await owner.getAttribute("title")) ?? "").toLowerCase();
    const [, contract, tokenId] = /#\/nft\/(0x[0-9a-f]+)\/(\d+)/.exec(href) ?? [];
    const owners = await api<{ owners: { address: string }[] }>(
      `/foundational/v1beta2/nfts/${contract}/${tokenId}/owners`,
    );
    assert.ok(
      owners.owners.some((o) => o.address.toLowerCase() === holder),
      `${holder} holds it`,
    );
    await owner.click();
    await rendered("wallet");
    assert.ok(page.url().includes(`#/wallet/${holder}`), page.url());
    const held = await api<{ nfts: unknown[] }>(`/wallets/v1beta2/${holder}/nfts?limit=50&includeSpam=false`);
    assert.equal(await page.locator('[data-table="wallet"] tbody tr').count(), held.nfts.length);
    await screenshot("wallet");
    assert.deepEqual(await axeViolations(), []);
    assert.deepEqual(takeProblems(), []);
  });

  test("the search box goes to a collection, a wallet or an NFT; an unknown NFT says so plainly", async () => {
    const collection = f.history.contracts.erc721.address.toLowerCase();
    const wallet = "0x00000000000000000000000000000000000000aa";
    for (const [text, expected] of [
      [collection.toUpperCase().replace("0X", "0x"), `#/collection/${collection}`],
      [wallet, `#/wallet/${wallet}`],
      [`${collection} 1`, `#/nft/${collection}/1`],
    ] as const) {
      await page.fill("#search", text);
      await page.press("#search", "Enter");
      await page.waitForURL((url) => url.hash.startsWith(expected), { timeout: RENDER_TIMEOUT_MS });
    }
    await go(`#/nft/${collection}/987654321`, "nft");
    assert.match(await page.innerText("main"), /No such NFT/);
    // The 404s of the unknown token and contract are expected here.
    assert.ok(takeProblems().every((p) => p.includes("404")));
  });

  test("a 429 is retried after its Retry-After; an API that cannot be reached is said plainly", async () => {
    const collection = f.history.contracts.erc721.address.toLowerCase();
    // The first owners request is refused as over the limit; the page waits and asks again.
    let refused = 0;
    let retried = 0;
    await page.route("**/owners_list?*", async (route) => {
      if (refused === 0) {
        refused++;
        await route.fulfill({
          status: 429,
          headers: { "retry-after": "1", "content-type": "application/json" },
          body: '{"code":8,"message":"rate limit exceeded","details":[]}',
        });
        return;
      }
      retried++;
      await route.continue();
    });
    const started = performance.now();
    await go(
      `#/collection/${collection}?duration=DURATION_1_DAY&period=GROUP_BY_PERIOD_1_HOUR`,
      "collection",
    );
    await page.unrouteAll();
    assert.equal(refused, 1);
    assert.ok(retried >= 1, "the owners were asked again");
    assert.ok(performance.now() - started >= 900, "after the second Retry-After asked for");
    assert.ok(takeProblems().every((p) => p.includes("429")));

    await page.route("**/v1beta2/**", (route) => route.abort("connectionrefused"));
    try {
      await go(`#/nft/${collection}/1`, "nft");
      assert.match(await page.innerText("main"), /cannot be reached/);
      await page.waitForSelector('.live[data-live="offline"]', { timeout: RENDER_TIMEOUT_MS });
    } finally {
      await page.unrouteAll();
    }
    await page.waitForSelector('.live[data-live="live"]', { timeout: RENDER_TIMEOUT_MS });
    takeProblems();
  });

  test("a sale made on the chain shows on the open collection page without a reload", async () => {
    const collection = f.history.contracts.erc721.address.toLowerCase();
    const salesPath = `/foundational/v1beta2/transfers/nft?contractAddress=${collection}&labelsAny=LABEL_SALE&limit=10`;
    await go(`#/collection/${collection}`, "collection");
    await page.evaluate("window.unreloaded = true");
    const before = new Set(
      (await api<{ nftTransfers: Transfer[] }>(salesPath)).nftTransfers.map((t) => t.blockchainEvent.txHash),
    );
    const trading = new AbortController();
    const live = runLiveActivity({
      rpcUrl: f.anvil.url,
      seed: "dashboard",
      contracts: f.history.contracts,
      intervalMs: 300,
      actionsPerTick: 6,
      signal: trading.signal,
    });
    let sale: string | undefined;
    try {
      const deadline = Date.now() + SALE_TIMEOUT_MS;
      while (sale === undefined && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        const now = await api<{ nftTransfers: Transfer[] }>(salesPath);
        sale = now.nftTransfers.find((t) => !before.has(t.blockchainEvent.txHash))?.blockchainEvent.txHash;
      }
    } finally {
      trading.abort();
      await live;
    }
    assert.ok(sale, `no new sale in ${collection} within ${SALE_TIMEOUT_MS} ms`);
    const started = performance.now();
    await page.waitForSelector(`[data-table="sales"] tr[data-tx="${sale}"]`, { timeout: SHOW_TIMEOUT_MS });
    process.stdout.write(
      `# dashboard new sale shown ${Math.round(performance.now() - started)} ms after the API had it\n`,
    );
    assert.equal(await page.evaluate<boolean>("window.unreloaded === true"), true);
    assert.deepEqual(takeProblems(), []);
  });

  test("at phone width every page fits without scrolling sideways", async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    const collection = f.history.contracts.erc721.address.toLowerCase();
    try {
      for (const [hash, name] of [
        ["#/", "top"],
        [`#/collection/${collection}`, "collection"],
        [`#/nft/${collection}/1`, "nft"],
      ] as const) {
        await go(hash, name);
        const width = await page.evaluate<number>("document.documentElement.scrollWidth");
        assert.ok(width <= 360, `${name} is ${width} px wide`);
        await screenshot(`${name}-phone`);
      }
    } finally {
      await page.setViewportSize({ width: 1200, height: 900 });
    }
    assert.deepEqual(takeProblems(), []);
  });

  test("in the dark scheme too, axe finds no serious violation (contrast included)", async () => {
    const collection = f.history.contracts.erc721.address.toLowerCase();
    await page.emulateMedia({ colorScheme: "dark" });
    try {
      for (const [hash, name] of [
        ["#/", "top"],
        [`#/collection/${collection}`, "collection"],
      ] as const) {
        await go(hash, name);
        assert.deepEqual(await axeViolations(), [], name);
        await screenshot(`${name}-dark`);
      }
    } finally {
      await page.emulateMedia({ colorScheme: "light" });
    }
    assert.deepEqual(takeProblems(), []);
  });

  test("an NFT with its fetched metadata: its image served by Mintlens, its traits and its rarity as the API gives them", async () => {
    const server = await startDemoMetadataServer(DEMO_METADATA_NAMES);
    const collection = f.history.contracts.erc721.address.toLowerCase();
    let worker: { stop(): Promise<void> } | undefined;
    try {
      // The demo's collections point at its metadata server; the worker fetches their documents and
      // images into the API's image cache, and ranks the collections as it goes.
      await pointDemoMetadata(f.anvil.url, f.history.contracts, server);
      const [held] = await f.sql<{ id: string }[]>`
        SELECT token_id::text AS id FROM token_balances
        WHERE chain_id = ${API_CHAIN_ID} AND contract = ${Buffer.from(collection.slice(2), "hex")} AND amount > 0
        ORDER BY token_id LIMIT 1`;
      assert.ok(held, "the collection has a held token");
      worker = startDemoMetadataWorker({
        sql: f.sql,
        chainId: API_CHAIN_ID,
        rpcUrl: f.anvil.url,
        server,
        blobs: createBlobStore(blobDir),
        ranked: true,
      });
      const path = `/foundational/v1beta2/nfts/${collection}/${held.id}`;
      interface Details {
        nft: { metadata: { name: string; image: { uri: string } | null } | null };
        rarity: { rank: string; collectionSize: string } | null;
      }
      let details: Details | undefined;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        details = await api<Details>(`${path}/details`);
        if (details.nft.metadata?.image?.uri.includes("/images/") && details.rarity !== null) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await worker.stop();
      // A pass that was running when the worker was stopped may have ranked the collection again,
      // and the API answers from its cache until its next look at the data version (every 200 ms
      // here): read once that look has been taken, as the page will.
      await new Promise((r) => setTimeout(r, 3 * VERSION_POLL_MS));
      details = await api<Details>(`${path}/details`);
      const image = details?.nft.metadata?.image?.uri;
      assert.ok(image?.includes("/images/"), `the token's image is cached: ${JSON.stringify(details)}`);
      const rarity = details?.rarity;
      assert.ok(rarity, "the token is ranked");
      const raw = await api<{ metadata: { raw: string } | null }>(`${path}/raw_metadata`);
      const attributes = (JSON.parse(raw.metadata?.raw ?? "{}") as { attributes?: { value: unknown }[] })
        .attributes;
      assert.ok(attributes && attributes.length > 0, "the document has traits");

      await go(`#/nft/${collection}/${held.id}`, "nft");
      await page.waitForSelector(".nft .media img", { timeout: RENDER_TIMEOUT_MS });
      assert.equal(await page.getAttribute(".nft .media img", "src"), image);
      assert.ok((await loadedWidth(page, ".nft .media img")) > 0, "the image loaded from Mintlens");
      assert.equal(await page.innerText(".nft h1"), details?.nft.metadata?.name);
      const shown = await page.locator(".traits li").allInnerTexts();
      assert.equal(shown.length, attributes.length, shown.join(" | "));
      for (const [i, attribute] of attributes.entries()) {
        assert.ok(
          shown[i]?.endsWith(String(attribute.value)),
          `${shown[i]} shows ${String(attribute.value)}`,
        );
      }
      assert.match(
        await page.innerText(".nft dl"),
        new RegExp(
          `rank ${Number(rarity.rank).toLocaleString("en-US")} of ${Number(rarity.collectionSize).toLocaleString("en-US")}`,
        ),
      );
      assert.deepEqual(await axeViolations(), []);
      assert.deepEqual(takeProblems(), []);
      await screenshot("nft-with-metadata");

      // Behind a public URL on another host, the image links name that host: the page, served from
      // its own origin, loads them from there, and its policy lets it.
      const port = new URL(f.restUrl).port;
      const elsewhere = await f.serveAgain({ publicUrl: `http://localhost:${port}` });
      const other = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      observe(other);
      try {
        await other.goto(`${elsewhere.restUrl}/#/nft/${collection}/${held.id}`);
        await other.fill("#api-key", f.key);
        await other.click("button[type=submit]");
        await other.waitForSelector('main[data-page="nft"] .media img', { timeout: RENDER_TIMEOUT_MS });
        const src = (await other.getAttribute(".nft .media img", "src")) ?? "";
        assert.equal(new URL(src).origin, `http://localhost:${port}`, src);
        assert.notEqual(new URL(elsewhere.restUrl).origin, new URL(src).origin, "another origin");
        assert.ok((await loadedWidth(other, ".nft .media img")) > 0, "the image loaded from the other host");
        assert.deepEqual(takeProblems(), []);
      } finally {
        await other.close();
        await elsewhere.close();
      }
    } finally {
      await worker?.stop();
      await server.close();
    }
  });

  test("each page's first render with a warm server, and the bundle's size (printed, not asserted)", async () => {
    const collection = f.history.contracts.erc721.address.toLowerCase();
    const holder = (
      await api<{ owner: { address: string }[] }>(`/collections/v1beta2/${collection}/owners_list?limit=1`)
    ).owner[0]?.address;
    assert.ok(holder);
    for (const [hash, name] of [
      ["#/", "top"],
      [`#/collection/${collection}`, "collection"],
      [`#/nft/${collection}/1`, "nft"],
      [`#/wallet/${holder}`, "wallet"],
    ] as const) {
      const ms = await firstRender(hash, name);
      process.stdout.write(`# dashboard ${name} first render ${ms} ms\n`);
    }
    const files = readdirSync(DASHBOARD_DIST);
    const bytes = files.reduce((sum, name) => sum + statSync(join(DASHBOARD_DIST, name)).size, 0);
    const gzipped = files.reduce(
      (sum, name) => sum + gzipSync(readFileSync(join(DASHBOARD_DIST, name))).length,
      0,
    );
    process.stdout.write(`# dashboard bundle ${bytes} bytes, ${gzipped} gzipped, in ${files.length} files\n`);
    assert.deepEqual(takeProblems(), []);
  });
});
