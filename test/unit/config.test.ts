import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, parseConfig } from "../../src/config/config.ts";

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  assert.fail("expected a configuration error");
}

test("a known chain needs only its RPC URL; presets fill the rest", () => {
  const config = parseConfig({ chain: ["polygon=https://polygon.example/rpc"] }, {});
  assert.deepEqual(config.chains, [
    {
      name: "polygon",
      chainId: 137,
      nativeSymbol: "POL",
      rpcUrl: "https://polygon.example/rpc",
      startBlock: 0,
      confirmations: 64,
      contractDiscovery: "auto",
      ownershipHistory: "off",
      // No native-pegged tokens, pools or dollar tokens: they are chosen by chain id at start.
    },
  ]);
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.dataDir, ".mintlens");
  assert.equal(config.tuning.pollIntervalMs, 2000);
});

test("per-chain values: a bare value applies to every chain, name=value to one", () => {
  const config = parseConfig(
    {
      chain: ["ethereum=https://eth.example/?key=a=b", "optimism=https://op.example"],
      startBlock: ["100", "optimism=5"],
      confirmations: ["ethereum=3"],
    },
    {},
  );
  const [eth, op] = config.chains;
  assert.equal(eth?.rpcUrl, "https://eth.example/?key=a=b");
  assert.equal(eth?.startBlock, 100);
  assert.equal(op?.startBlock, 5);
  assert.equal(eth?.confirmations, 3);
  assert.equal(op?.confirmations, 20);
});

test("the environment configures chains; flags win over it", () => {
  const env = {
    MINTLENS_CHAINS: "base",
    MINTLENS_BASE_RPC_URL: "https://base.example",
    MINTLENS_BASE_CHAIN_ID: "8453",
    MINTLENS_BASE_NATIVE_SYMBOL: "ETH",
    MINTLENS_BASE_START_BLOCK: "7",
    DATABASE_URL: "postgres://u:p@db.example/mintlens",
    MINTLENS_POLL_INTERVAL_MS: "500",
  };
  const config = parseConfig({ startBlock: ["9"] }, env);
  assert.equal(config.chains[0]?.chainId, 8453);
  assert.equal(config.chains[0]?.startBlock, 9);
  assert.equal(config.databaseUrl, "postgres://u:p@db.example/mintlens");
  assert.equal(config.tuning.pollIntervalMs, 500);
});

test("every problem is listed, each naming its field", () => {
  const found = problems(() =>
    parseConfig(
      {
        chain: ["Bad Name", "ethereum=ws://x", "ethereum=https://y", "custom"],
        pollInterval: "10",
        rpcRetries: "x",
        databaseUrl: "mysql://nope",
        logLevel: "loud",
      },
      {},
    ),
  );
  const expected = [
    'chain: "bad name" is not a valid chain name',
    "ethereum rpc url: rpc url must be an http(s) URL",
    "chain: ethereum is given twice",
    "custom rpc url: missing",
    "custom chain id: unknown chain",
    "custom native symbol: unknown chain",
    "poll interval: must be at least 50",
    "rpc retries: rpc retries must be a whole number",
    "database url: must be a postgres:// or postgresql:// URL",
    "log level:",
  ];
  for (const prefix of expected) {
    assert.ok(
      found.some((p) => p.startsWith(prefix)),
      `"${prefix}" among:\n${found.join("\n")}`,
    );
  }
});

test("no chain at all is a problem, and two chains may not share a chain id", () => {
  assert.ok(
    problems(() => parseConfig({}, {})).some((p) => p.startsWith("chain: name at least one chain")),
    "missing chain reported",
  );
  const found = problems(() =>
    parseConfig(
      { chain: ["a=https://a.example", "b=https://b.example"], chainId: ["5"], nativeSymbol: ["X"] },
      {},
    ),
  );
  assert.ok(
    found.some((p) => p === "b chain id: 5 is used twice"),
    found.join("\n"),
  );
});

test("native-pegged tokens are taken per chain, lower-cased, and refused unless addresses", () => {
  const config = parseConfig(
    {
      chain: ["dev=http://127.0.0.1:8545"],
      chainId: ["31337"],
      nativeSymbol: ["ETH"],
      nativePegged: [
        "dev=0xAbC0000000000000000000000000000000000001, 0x00000000000000000000000000000000000000f2",
      ],
    },
    {},
  );
  assert.deepEqual(config.chains[0]?.nativePegged, [
    "0xabc0000000000000000000000000000000000001",
    "0x00000000000000000000000000000000000000f2",
  ]);
  assert.throws(
    () => parseConfig({ chain: ["ethereum=http://127.0.0.1:8545"], nativePegged: ["weth"] }, {}),
    /ethereum native-pegged tokens: must be 0x addresses/,
  );
});

test("rate pools and dollar tokens are taken per chain, from flags or the environment, and checked", () => {
  const pool = "0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc";
  const config = parseConfig(
    {
      chain: ["dev=http://127.0.0.1:8545", "ethereum=http://127.0.0.1:8546"],
      chainId: ["dev=31337"],
      nativeSymbol: ["dev=ETH"],
      ratePools: [`dev=v2:${pool}, v3:0x00000000000000000000000000000000000000f3`],
      usdTokens: ["dev=0x00000000000000000000000000000000000000F4"],
    },
    {},
  );
  const [dev, ethereum] = config.chains;
  assert.deepEqual(dev?.ratePools, [
    { kind: "v2", address: pool.toLowerCase() },
    { kind: "v3", address: "0x00000000000000000000000000000000000000f3" },
  ]);
  assert.deepEqual(dev?.usdTokens, ["0x00000000000000000000000000000000000000f4"]);
  // Not given: the indexer takes the chain's presets.
  assert.equal(ethereum?.ratePools, undefined);
  assert.equal(ethereum?.usdTokens, undefined);

  const fromEnv = parseConfig(
    { chain: ["ethereum=http://127.0.0.1:8545"] },
    { MINTLENS_ETHEREUM_RATE_POOLS: "", MINTLENS_ETHEREUM_USD_TOKENS: pool },
  );
  assert.deepEqual(fromEnv.chains[0]?.ratePools, [], "an empty list: no pools at all");
  assert.deepEqual(fromEnv.chains[0]?.usdTokens, [pool.toLowerCase()]);

  const found = problems(() =>
    parseConfig(
      { chain: ["ethereum=http://127.0.0.1:8545"], ratePools: [`v4:${pool}`], usdTokens: ["usdc"] },
      {},
    ),
  );
  assert.deepEqual(found, [
    "ethereum rate pools: must be v2:0x… or v3:0x… pools, comma-separated",
    "ethereum usd tokens: must be 0x addresses, comma-separated",
  ]);
});

test("the indexers read through a pool sized for their chains, unless set", () => {
  const one = parseConfig({ chain: ["polygon=https://polygon.example/rpc"] }, {});
  assert.equal(one.indexerPoolSize, 8);
  const three = parseConfig(
    { chain: ["ethereum=https://e.example", "polygon=https://p.example", "optimism=https://o.example"] },
    {},
  );
  assert.equal(three.indexerPoolSize, 16);
  const set = parseConfig(
    { chain: ["polygon=https://polygon.example/rpc"], indexerPoolSize: "5" },
    { MINTLENS_INDEXER_POOL_SIZE: "30" },
  );
  assert.equal(set.indexerPoolSize, 5);
  assert.equal(
    parseConfig({ chain: ["polygon=https://polygon.example/rpc"] }, { MINTLENS_INDEXER_POOL_SIZE: "30" })
      .indexerPoolSize,
    30,
  );
  assert.deepEqual(
    problems(() => parseConfig({ chain: ["polygon=https://p.example"], indexerPoolSize: "0" }, {})),
    ["indexer pool size: must be at least 1"],
  );
});

test("the ownership history before the start block: off unless asked, logs per chain, anything else refused", () => {
  const config = parseConfig(
    {
      chain: ["ethereum=https://eth.example", "optimism=https://op.example"],
      startBlock: ["17000000"],
      ownershipHistory: ["ethereum=logs"],
    },
    {},
  );
  assert.deepEqual(
    config.chains.map((c) => [c.name, c.ownershipHistory]),
    [
      ["ethereum", "logs"],
      ["optimism", "off"],
    ],
  );
  assert.throws(
    () => parseConfig({ chain: ["ethereum=https://eth.example"], ownershipHistory: ["state"] }, {}),
    /ethereum ownership history/,
  );
});

test("rate settings are taken per chain: a window as a duration, a floor in native coins, a jump above 1", () => {
  const config = parseConfig(
    {
      chain: ["ethereum=http://127.0.0.1:8545", "polygon=http://127.0.0.1:8546"],
      rateWindow: ["30m", "polygon=90s"],
      rateMinDepth: ["polygon=100000.5"],
      rateJump: ["1.5"],
    },
    {},
  );
  const [ethereum, polygon] = config.chains;
  assert.equal(ethereum?.rateWindowSeconds, 1800);
  assert.equal(polygon?.rateWindowSeconds, 90);
  assert.equal(ethereum?.rateMinDepth, undefined, "the preset of its chain id, at start");
  assert.equal(polygon?.rateMinDepth, 100_000_500_000_000_000_000_000n);
  assert.deepEqual(ethereum?.rateJump, { num: 15n, den: 10n });
  assert.equal(
    parseConfig({ chain: ["ethereum=http://127.0.0.1:8545"], rateWindow: ["0"] }, {}).chains[0]
      ?.rateWindowSeconds,
    0,
  );
  assert.throws(
    () =>
      parseConfig(
        {
          chain: ["ethereum=http://127.0.0.1:8545"],
          rateWindow: ["soon"],
          rateMinDepth: ["-1"],
          rateJump: ["1"],
        },
        {},
      ),
    (error: Error) =>
      /ethereum rate window: must be a duration/.test(error.message) &&
      /ethereum rate min depth: must be a number of native coins/.test(error.message) &&
      /ethereum rate jump: must be more than 1/.test(error.message),
  );
});
