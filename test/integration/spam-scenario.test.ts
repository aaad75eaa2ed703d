/**
 * Spam verdicts over a chain played on anvil: airdrop sprays (ERC-721 and ERC-1155, hundreds to a
 * thousand addresses each), look-alike names of a collection with real sales, a site in a name,
 * and the honest look-alikes that must stay clean (a free mint whose holders minted themselves, a
 * name sharing words with the known one, an ERC-1155 edition bought by hundreds, a new collection
 * with one sale, a selling collection that airdropped to its community). Indexed by the real
 * indexer, judged by the spam job's passes, served by the API; the CLI's overrides win at once.
 * The misses and false positives are printed as measured figures.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeDeployData, encodeFunctionData, keccak256, toHex } from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { type ContractName, loadArtifact } from "../../src/devchain/artifacts.ts";
import { runSpamPass } from "../../src/spam/job.ts";
import { spamVerdicts } from "../../src/store/read/spam.ts";
import { type ApiClient, createApiFixtureOn } from "../support/api-client.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { runCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";

const CHAIN_ID = 31337;
const DEPLOYER = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266" as Address;
const ETHER = 10n ** 18n;

let anvil: Anvil;
let db: TestDatabase;
let api: ApiClient;

/** Every contract of the scenario by role, and whether it should be judged spam. */
const roles = new Map<string, { address: Address; spam: boolean }>();

/** A fresh address per label and number, the same every run. */
const someone = (label: string, i: number) => keccak256(toHex(`${label}:${i}`)).slice(0, 42) as Address;

async function send(from: Address, to: Address | undefined, data: Hex, value = 0n): Promise<Hex> {
  return rawRpc<Hex>(anvil.url, "eth_sendTransaction", [
    { from, ...(to ? { to } : {}), data, value: `0x${value.toString(16)}`, gas: "0x1c9c380" },
  ]);
}

/** Sends transactions (each of another sender unless `oneSender`) a few at a time (anvil mines one block each) and checks that each succeeded. */
async function sendAll(txs: (() => Promise<Hex>)[], oneSender = false): Promise<void> {
  // One sender's transactions go one after the other: sent at once they would share a nonce.
  const batch = oneSender ? 1 : 16;
  for (let i = 0; i < txs.length; i += batch) {
    const hashes = await Promise.all(txs.slice(i, i + batch).map((tx) => tx()));
    for (const hash of hashes)
      assert.equal((await receiptOf(hash)).status, "0x1", `transaction ${hash} succeeded`);
  }
}

/** A transaction's receipt: anvil may answer before its block is sealed, so polled, for 10 s at most. */
async function receiptOf(hash: Hex): Promise<{ status: Hex; contractAddress: Address | null }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const receipt = await rawRpc<{ status: Hex; contractAddress: Address | null } | null>(
      anvil.url,
      "eth_getTransactionReceipt",
      [hash],
    );
    if (receipt) return receipt;
    if (Date.now() > deadline) assert.fail(`no receipt for ${hash} in 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function call(name: ContractName, fn: string, args: unknown[]): Hex {
  return encodeFunctionData({ abi: loadArtifact(name).abi, functionName: fn, args });
}

async function deploy(name: ContractName, args: unknown[] = []): Promise<Address> {
  const { abi, bytecode } = loadArtifact(name);
  const hash = await send(DEPLOYER, undefined, encodeDeployData({ abi, bytecode, args }));
  const receipt = await receiptOf(hash);
  assert.equal(receipt.status, "0x1", `deploying ${name}`);
  assert.ok(receipt.contractAddress);
  return receipt.contractAddress.toLowerCase() as Address;
}

async function fund(addresses: readonly Address[]): Promise<void> {
  await Promise.all(
    addresses.map((address) =>
      rawRpc(anvil.url, "anvil_setBalance", [address, `0x${(10n * ETHER).toString(16)}`]),
    ),
  );
}

async function erc721(role: string, name: string, symbol: string, spam: boolean): Promise<Address> {
  const address = await deploy("TestERC721", [name, symbol]);
  roles.set(role, { address, spam });
  return address;
}

/** Tokens of `nft` to `recipients` by the sprayer, `perTx` recipients per transaction. */
async function spray721(sprayer: Address, nft: Address, recipients: Address[], perTx: number): Promise<void> {
  const txs = [];
  for (let i = 0; i < recipients.length; i += perTx) {
    txs.push(() =>
      send(
        DEPLOYER,
        sprayer,
        call("AirdropSprayer", "spray721", [nft, BigInt(i), recipients.slice(i, i + perTx)]),
      ),
    );
  }
  await sendAll(txs, true);
}

/** Organic sales through the marketplace: each seller mints one token and sells it to a buyer of its own. */
async function sell721(
  market: Address,
  nft: Address,
  label: string,
  count: number,
  firstId: number,
): Promise<void> {
  const sellers = Array.from({ length: count }, (_, i) => someone(`${label}-seller`, i));
  const buyers = Array.from({ length: count }, (_, i) => someone(`${label}-buyer`, i));
  await fund([...sellers, ...buyers]);
  const price = ETHER / 10n;
  await sendAll(
    sellers.map(
      (seller, i) => () => send(seller, nft, call("TestERC721", "mint", [seller, BigInt(firstId + i)])),
    ),
  );
  await sendAll(
    sellers.map((seller) => () => send(seller, nft, call("TestERC721", "setApprovalForAll", [market, true]))),
  );
  await sendAll(
    sellers.map(
      (seller, i) => () =>
        send(
          seller,
          market,
          call("TestMarketplace", "list", [nft, BigInt(firstId + i), `0x${"00".repeat(20)}`, price]),
        ),
    ),
  );
  await sendAll(
    buyers.map(
      (buyer, i) => () =>
        send(buyer, market, call("TestMarketplace", "buy", [nft, BigInt(firstId + i)]), price),
    ),
  );
}

before(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, args: ["--auto-impersonate", "--gas-limit", "60000000"] });
  db = await createTestDatabase();
  const sprayer = await deploy("AirdropSprayer");
  const market = await deploy("TestMarketplace");
  const shop = await deploy("EditionShop");

  // The known collection: eight organic sales.
  const apes = await erc721("known", "Bored Ape Yacht Club", "BAYC", false);
  await sell721(market, apes, "apes", 8, 0);

  // Spam: look-alike names and a lure sprayed to hundreds; an ERC-1155 pass sprayed to 1,100.
  const zero = await erc721("imitation-digit", "B0red Ape Yacht Club", "BAYC", true);
  // The first five to the wallet the API test reads, which also minted a Pixel Pal.
  await spray721(
    sprayer,
    zero,
    Array.from({ length: 300 }, (_, i) => (i < 5 ? someone("pals", 0) : someone("zero", i))),
    150,
  );
  const joined = await erc721("imitation-spacing", "Boredape YachtClub", "BAYC", true);
  await spray721(
    sprayer,
    joined,
    Array.from({ length: 200 }, (_, i) => someone("joined", i)),
    200,
  );
  const cyrillic = await erc721("imitation-cyrillic", "Bоred Аpe Yacht Сlub", "BAYC", true);
  await spray721(
    sprayer,
    cyrillic,
    Array.from({ length: 120 }, (_, i) => someone("cyrillic", i)),
    120,
  );
  const lure = await erc721("lure-name", "Claim 5000$ at apecoin-rewards.xyz", "GIFT", true);
  await spray721(
    sprayer,
    lure,
    Array.from({ length: 150 }, (_, i) => someone("lure", i)),
    150,
  );
  const pass = await deploy("TestERC1155", ["https://pass.example/{id}.json"]);
  roles.set("edition-spray", { address: pass, spam: true });
  const passHolders = Array.from({ length: 1_100 }, (_, i) => someone("pass", i));
  const passTxs = [];
  for (let i = 0; i < passHolders.length; i += 275) {
    passTxs.push(() =>
      send(DEPLOYER, sprayer, call("AirdropSprayer", "spray1155", [pass, 1n, passHolders.slice(i, i + 275)])),
    );
  }
  await sendAll(passTxs, true);
  // A quiet copy: the known name on 30 addresses, one transaction. Too small to show two signals.
  const quiet = await erc721("imitation-small", "Bored Ape Yacht Club", "BAYC", true);
  await spray721(
    sprayer,
    quiet,
    Array.from({ length: 30 }, (_, i) => someone("quiet", i)),
    30,
  );

  // Honest: a free mint whose 60 holders each minted their own token.
  const pals = await erc721("free-mint", "Pixel Pals", "PALS", false);
  const minters = Array.from({ length: 60 }, (_, i) => someone("pals", i));
  await fund(minters);
  await sendAll(minters.map((m, i) => () => send(m, pals, call("TestERC721", "mint", [m, BigInt(i)]))));
  // Honest: words shared with the known name, two sales.
  const pixels = await erc721("shared-words", "Bored Pixels Club", "BPC", false);
  await sell721(market, pixels, "pixels", 2, 0);
  // Honest: a new collection with one sale.
  const owls = await erc721("new-few-sales", "Night Owls", "OWL", false);
  await sell721(market, owls, "owls", 1, 0);
  // Honest: a selling collection that airdropped a token to 120 community members.
  const frogs = await erc721("airdrop-with-sales", "Frog Friends", "FROG", false);
  await sell721(market, frogs, "frogs", 4, 10_000);
  await spray721(
    sprayer,
    frogs,
    Array.from({ length: 120 }, (_, i) => someone("frogs", i)),
    120,
  );
  // Honest: an ERC-1155 edition, each of 300 buyers buying a unit for itself from the artist.
  const edition = await deploy("TestERC1155", ["https://edition.example/{id}.json"]);
  roles.set("edition-sold", { address: edition, spam: false });
  const artist = someone("artist", 0);
  const collectors = Array.from({ length: 300 }, (_, i) => someone("collector", i));
  await fund([artist, ...collectors]);
  await sendAll(
    [
      () => send(artist, edition, call("TestERC1155", "mint", [artist, 7n, 300n, "0x"])),
      () => send(artist, edition, call("TestERC1155", "setApprovalForAll", [shop, true])),
    ],
    true,
  );
  const price = ETHER / 100n;
  await sendAll(
    collectors.map(
      (c) => () => send(c, shop, call("EditionShop", "buy", [edition, artist, 7n, price]), price),
    ),
  );

  const head = Number(await rawRpc<Hex>(anvil.url, "eth_blockNumber", []));
  await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
  for (let pass = 0; pass < 50; pass++) {
    const result = await runSpamPass(db.sql, CHAIN_ID);
    if (!result.more && result.judged === 0) break;
  }
  api = await createApiFixtureOn(db.sql, CHAIN_ID);
});

after(async () => {
  await api?.close();
  await db?.close();
  await stopTestServer();
  await anvil?.stop();
});

describe("spam verdicts on a played chain", () => {
  test("no honest collection is judged spam; the spam ones are counted, misses and all", async () => {
    const verdicts = await spamVerdicts(
      db.sql,
      CHAIN_ID,
      [...roles.values()].map((r) => r.address),
    );
    const lines = [];
    let falsePositives = 0;
    let misses = 0;
    const honest = [...roles.values()].filter((r) => !r.spam).length;
    const spam = roles.size - honest;
    for (const [role, { address, spam: expected }] of roles) {
      const verdict = verdicts.get(address);
      assert.ok(verdict && verdict.source === "computed", `${role} was judged`);
      if (verdict.isSpam && !expected) falsePositives++;
      if (!verdict.isSpam && expected) misses++;
      lines.push(
        `${role.padEnd(20)} ${expected ? "spam  " : "honest"} score ${String(verdict.score).padStart(3)} ${verdict.signals.map((s) => s.name).join(",")}`,
      );
    }
    console.log(
      `${lines.join("\n")}\nfalse positives: ${falsePositives} of ${honest} honest; misses: ${misses} of ${spam} spam`,
    );
    assert.equal(falsePositives, 0, lines.join("\n"));
    // The quiet copy is the one miss the weights accept: a look-alike name alone is not enough.
    assert.ok(misses <= 1, lines.join("\n"));
    const judged = (role: string) => verdicts.get(roles.get(role)?.address as Address);
    assert.deepEqual(
      judged("imitation-digit")
        ?.signals.map((s) => s.name)
        .sort(),
      ["airdrop_spray", "imitation", "no_organic_demand"],
    );
    assert.equal(
      judged("imitation-digit")?.signals.find((s) => s.name === "imitation")?.evidence.imitates,
      roles.get("known")?.address,
    );
    assert.ok(judged("edition-spray")?.signals.some((s) => s.name === "edition_spray"));
    assert.ok(judged("lure-name")?.signals.some((s) => s.name === "lure_text"));
    assert.deepEqual(
      judged("free-mint")?.signals.map((s) => s.name),
      ["no_organic_demand"],
    );
    assert.deepEqual(
      judged("airdrop-with-sales")?.signals.map((s) => s.name),
      ["airdrop_spray"],
    );
  });

  test("transfers carry LABEL_SPAM exactly when their collection is judged spam, and the label filters", async () => {
    const verdicts = await spamVerdicts(
      db.sql,
      CHAIN_ID,
      [...roles.values()].map((r) => r.address),
    );
    const spamContracts = new Set([...verdicts].filter(([, v]) => v.isSpam).map(([c]) => c));
    assert.ok(spamContracts.size >= 4 && spamContracts.size < roles.size);
    // The replay: every stored transfer of a spam collection, newest first.
    const expected = (
      await db.sql<{ k: string; c: Uint8Array }[]>`
        SELECT concat_ws('/', block_number, log_index, seq) AS k, contract AS c FROM nft_transfers
        WHERE chain_id = ${CHAIN_ID} ORDER BY block_number DESC, log_index DESC, seq DESC`
    )
      .filter((r) => spamContracts.has(`0x${Buffer.from(r.c).toString("hex")}` as Address))
      .map((r) => r.k);
    type Transfer = {
      blockchainEvent: { blockNumber: string; logIndex: string; seqIndex: string };
      contractAddress: string;
      labels: string[];
    };
    const listed: Transfer[] = [];
    let token = "";
    for (let pages = 0; pages < 100; pages++) {
      const answer = await api.get(
        `/foundational/v1beta2/transfers/nft?labelsAny=LABEL_SPAM&limit=500${token ? `&pageToken=${token}` : ""}`,
      );
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const body = answer.body as { nftTransfers: Transfer[]; nextPageToken: string };
      listed.push(...body.nftTransfers);
      token = body.nextPageToken;
      if (token === "") break;
    }
    assert.equal(token, "");
    const key = (t: Transfer) =>
      `${t.blockchainEvent.blockNumber}/${t.blockchainEvent.logIndex}/${t.blockchainEvent.seqIndex}`;
    assert.deepEqual(listed.map(key), expected);
    assert.ok(listed.every((t) => t.labels.includes("LABEL_SPAM")));
    // Unfiltered, an honest collection's transfers carry no spam label.
    const honest = roles.get("known")?.address as Address;
    const answer = await api.get(`/foundational/v1beta2/transfers/nft?contractAddress=${honest}&limit=50`);
    const transfers = (answer.body as { nftTransfers: Transfer[] }).nftTransfers;
    assert.ok(transfers.length > 0);
    assert.ok(transfers.every((t) => !t.labels.includes("LABEL_SPAM")));
  });

  test("a wallet's NFTs leave spam out unless asked; each says its verdict; an override wins at once", async () => {
    // A wallet that got five of the digit imitation sprayed and minted a Pixel Pal.
    const wallet = someone("pals", 0);
    const zero = roles.get("imitation-digit")?.address as Address;
    const list = async (query: string) => {
      const answer = await api.get(`/wallets/v1beta2/${wallet}/nfts${query}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return (
        answer.body as {
          nfts: {
            nft: { contractAddress: string };
            spam: { isSpam: boolean; score: number; source: string };
          }[];
        }
      ).nfts;
    };
    const clean = await list("");
    assert.deepEqual(
      clean.map((n) => n.nft.contractAddress),
      [roles.get("free-mint")?.address],
    );
    assert.equal(clean[0]?.spam.isSpam, false);
    assert.equal(clean[0]?.spam.source, "SPAM_VERDICT_SOURCE_COMPUTED");
    const all = await list("?includeSpam=true");
    assert.equal(all.length, 6);
    assert.equal(all.filter((n) => n.spam.isSpam).length, 5);
    // Pages of one skip the spam ones, by offset and by page token alike.
    const first = await api.get(`/wallets/v1beta2/${wallet}/nfts?limit=1`);
    assert.equal((first.body as { nextPageToken: string }).nextPageToken, "");

    const unmark = await runCommand(["spam", "unmark", zero, "--chain", "test", "--database-url", db.url]);
    assert.equal(unmark.code, 0, unmark.stderr);
    await waitFor(async () => (await list("")).length === 6, "the unmarked collection listed");
    const listed = await runCommand(["spam", "list", "--database-url", db.url]);
    assert.match(listed.stdout, new RegExp(`test\\s+${zero}\\s+not spam`));
    const clear = await runCommand(["spam", "clear", zero, "--chain", "test", "--database-url", db.url]);
    assert.equal(clear.code, 0, clear.stderr);
    assert.match(clear.stdout, /spam, as computed \(score 100\)/);
    await waitFor(async () => (await list("")).length === 1, "the computed verdict again");
    const mark = await runCommand([
      "spam",
      "mark",
      roles.get("free-mint")?.address ?? "",
      "--chain",
      "test",
      "--database-url",
      db.url,
    ]);
    assert.equal(mark.code, 0, mark.stderr);
    await waitFor(async () => (await list("")).length === 0, "the marked collection left out");
    const again = await runCommand(["spam", "clear", zero, "--chain", "test", "--database-url", db.url]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no decision about/);
  });

  test("a collection's metadata carries its verdict", async () => {
    const zero = roles.get("imitation-digit")?.address as Address;
    const answer = await api.get(`/collections/v1beta2/${zero}/metadata`);
    assert.equal(answer.status, 200);
    const spam = (
      answer.body as {
        spam: {
          isSpam: boolean;
          score: number;
          signals: { name: string; weight: number; evidence: { name: string; value: string }[] }[];
        };
      }
    ).spam;
    assert.equal(spam.isSpam, true);
    assert.equal(spam.score, 100);
    const airdrop = spam.signals.find((s) => s.name === "airdrop_spray");
    assert.equal(airdrop?.weight, 40);
    const figure = (name: string) => airdrop?.evidence.find((e) => e.name === name)?.value;
    assert.equal(figure("largestTxRecipients"), "150");
    // 146 distinct in the first transaction (five tokens to one wallet), 150 in the second.
    assert.equal(figure("sprayedRecipients"), "296");
  });
});

/** Polls the API (its version poll is 100 ms here) until `check` holds; fails after 5 s. */
async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
