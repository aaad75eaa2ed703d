/**
 * What the API's answer cache holds in memory, against what it counts: an API over a generated
 * history is asked, in its own process, for hundreds of distinct answers of two shapes (pages of
 * 20 transfers, and pages of 10 owners: large nested answers and small flat ones), each then
 * cached; the heap and external memory after a full collection, before and after, are what they
 * hold. Printed beside their JSON's bytes and what `cachedSize` counts for them.
 * Usage: npm run bench:cache-memory [-- --days 6]
 * Take /tmp/mintlens-cpu.lock around it on a shared machine.
 */
import { parseArgs } from "node:util";
import { ENTRY_BYTES, MESSAGE_BYTES_PER_JSON_BYTE } from "../src/api/response-cache.ts";
import { startApiFixture } from "../test/support/api-fixture.ts";

const { values: args } = parseArgs({ options: { days: { type: "string", default: "6" } } });
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error("run with node --expose-gc (npm run bench:cache-memory does)");
/** The keys of these requests (data version, operation, checked request) are about this long. */
const KEY_BYTES = 150;
const MiB = 2 ** 20;

const f = await startApiFixture({ days: Number(args.days), seed: "cache-memory" });
try {
  const listed = await f.rest("/foundational/v1beta2/contracts?limit=100");
  const contracts = (listed.body as { contracts: { address: string }[] }).contracts.map((c) => c.address);
  const shapes: [string, string[]][] = [
    [
      "transfers, 20 a page",
      Array.from(
        { length: 600 },
        (_, offset) => `/foundational/v1beta2/transfers/nft?limit=20&offset=${offset}`,
      ),
    ],
    [
      "owners, 10 a page",
      contracts.flatMap((c) =>
        Array.from({ length: 40 }, (_, o) => `/collections/v1beta2/${c}/owners_list?limit=10&offset=${o}`),
      ),
    ],
  ];
  const held = () => {
    collect();
    collect();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  for (const [name, paths] of shapes) {
    await new Promise((r) => setTimeout(r, 500));
    const before = held();
    let json = 0;
    for (const path of paths) {
      const answer = await f.rest(path);
      if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${answer.text}`);
      json += Buffer.byteLength(answer.text);
    }
    await new Promise((r) => setTimeout(r, 500));
    const real = held() - before;
    const counted = paths.length * (ENTRY_BYTES + KEY_BYTES) + json * (1 + MESSAGE_BYTES_PER_JSON_BYTE);
    console.log(
      `${name}: ${paths.length} answers, JSON ${(json / MiB).toFixed(2)} MiB; held ${(real / MiB).toFixed(2)} MiB ` +
        `(${(real / json).toFixed(1)}× the JSON); counted ${(counted / MiB).toFixed(2)} MiB (${(counted / real).toFixed(2)}× what is held)`,
    );
  }
} finally {
  await f.close();
}
