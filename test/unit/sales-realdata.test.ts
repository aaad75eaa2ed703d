/**
 * Sale attribution on recorded mainnet transactions: receipts, traces and blocks recorded by other
 * projects, read through the product's decoders (test/support/recorded-sales.ts). Expected parties
 * and amounts come from the recordings themselves: the NFT Transfer logs, the payment movements,
 * the transactions' values and, for the aggregator sale, Reservoir's expected fills.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ChainLog, NativeTransfer } from "../../src/core/types.ts";
import { attributeTransaction } from "../../src/sales/attribute.ts";
import type { SaleTransaction, Trade } from "../../src/sales/types.ts";
import {
  camelCaseFrame,
  nativeFromParity,
  nftLogsFromCalls,
  type RecordedTransaction,
  recordedSales,
  rpcLog,
  transferLog,
} from "../support/recorded-sales.ts";

const ETH = 10n ** 18n;
const BLUR_POOL: Address = "0x0000000000a39bb272e79075ade125fd351887ac";
const BLUR_V2: Address = "0xb2ecfe4e4d61f8790bbb9de2d1259b9e2410cea5";

const sum = (values: readonly bigint[]) => values.reduce((a, b) => a + b, 0n);
const tradesOf = (sales: readonly SaleTransaction[]) => sales.flatMap((tx) => attributeTransaction(tx));

/** What a test states about a trade: token, parties and payment. */
function summary(t: Trade) {
  return {
    kind: t.kind,
    tokenId: t.tokenId,
    seller: t.seller,
    buyer: t.buyer,
    native: t.native,
    fungible: t.fungible.map((f) => ({ token: f.token, amount: f.amount })),
  };
}

describe("Blur v2 transactions with receipt and trace (3loop)", () => {
  const dir = new URL("../../../shared/realdata/3loop-blur-txs/", import.meta.url);
  const present = existsSync(dir);

  /** A recorded Blur transaction: its SaleTransactions and trades. GPL data, read in place. */
  function blur(hash: string) {
    const d = JSON.parse(readFileSync(new URL(`${hash}.json`, dir), "utf8"));
    const t = d.transaction;
    const transaction: RecordedTransaction = {
      hash: t.hash,
      from: t.from.toLowerCase(),
      to: t.to === null ? null : t.to.toLowerCase(),
      value: BigInt(t.value),
    };
    const recorded = recordedSales({
      logs: d.receipt.logs.map(rpcLog),
      native: nativeFromParity(d.trace, Number(t.blockNumber)),
      transactions: [transaction],
    });
    assert.deepEqual(recorded.unread, [], "every transfer log is read");
    return { transaction, sales: recorded.sales, trades: tradesOf(recorded.sales) };
  }

  const options = present
    ? {}
    : { skip: "../shared/realdata/3loop-blur-txs is absent (GPL data, read in place)" };

  test("cancelTrades moves no NFT and is no sale", options, () => {
    const { sales, trades } = blur("0x0f5cb8565e543d866a0477865575c20919e09c37c14588cf1878c91a47c6e37e");
    assert.equal(sales.length, 0);
    assert.deepEqual(trades, []);
  });

  test(
    "takeAsk: three listings bought with the 0.285 ETH the transaction sent, each at its listed 0.095",
    options,
    () => {
      const { transaction, sales, trades } = blur(
        "0x9ed41e3d626605673c282dc8a0f7429e7abcab112d6529b0c77ee43954202cab",
      );
      assert.equal(transaction.value, 285n * 10n ** 15n);
      assert.equal(sales[0]?.markets.length, 3, "one Blur execution event per listing");
      assert.equal(trades.length, 3);
      assert.equal(sum(trades.map((t) => t.native)), transaction.value);
      const buyer: Address = "0x22b81a596d3a1f727801bac52fc1b6c258765f48";
      const sellers: Record<string, Address> = {
        "1772": "0x928c2909847b884ba5dd473568de6382b028f7b8",
        "599": "0x906a43ef2107ac308335a3809f07baa9644d46f6",
        "755": "0x928c2909847b884ba5dd473568de6382b028f7b8",
      };
      for (const t of trades) {
        assert.equal(t.kind, "sale");
        assert.equal(t.market, "blur");
        assert.equal(t.buyer, buyer);
        assert.equal(t.seller, sellers[t.tokenId.toString()]);
        assert.notEqual(t.seller, BLUR_V2);
        assert.deepEqual(t.fungible, []);
        // Each listed at 0.095 ETH, as Blur's execution events state. The movements alone cannot
        // tell it: the seller of 599 paid no royalty and netted all of it, the other netted 0.094525
        // per NFT, and the royalties are paid after all sellers, to no seller in particular.
        assert.equal(t.attributedBy, "ATTRIBUTED_BY_MARKET_EVENT");
        assert.equal(t.native, 95n * 10n ** 15n, t.tokenId.toString());
      }
    },
  );

  test("takeBidSingle: the sender's NFT goes to the bidder for 0.44 in Blur Pool", options, () => {
    const { transaction, trades } = blur(
      "0x02a4dda78f1452772d87aa080d65ed7c34785b9d0f4c20aa6c91c51a63ee1fa4",
    );
    assert.deepEqual(trades.map(summary), [
      {
        kind: "sale",
        tokenId: 9912n,
        seller: transaction.from,
        buyer: "0x48baf3da3bed7ed1bc547e260c058254b3ac4c3d",
        native: 0n,
        fungible: [{ token: BLUR_POOL, amount: 44n * 10n ** 16n }],
      },
    ]);
    assert.equal(trades[0]?.market, "blur");
  });

  test("takeAskSinglePool: the Blur Pool the buyer burnt reaches the seller side as ETH", options, () => {
    const { transaction, sales, trades } = blur(
      "0xf852866a9d10ab4713b00f3a012b7e60a48055a6f2cd99ae7efce205c390f710",
    );
    assert.deepEqual(
      sales[0]?.fungible.map((f) => [f.contract, f.amount]),
      [[BLUR_POOL, 1_061_717_990n * 10n ** 9n]],
      "the pool token is an ERC-20 movement of the transaction",
    );
    assert.deepEqual(trades.map(summary), [
      {
        kind: "sale",
        tokenId: 16614n,
        seller: "0xb20760dd8b5997358a3ad088016202f793ba32da",
        buyer: transaction.from,
        // The pool pays the ETH out to the exchange, which pays the seller and the fee with it:
        // that ETH, all of it the buyer's, is what reached the seller side.
        native: 1_061_717_990n * 10n ** 9n,
        fungible: [],
      },
    ]);
    assert.equal(trades[0]?.attributedBy, "ATTRIBUTED_BY_SINGLE_TRANSFER");
  });

  test(
    "takeBid: nine NFTs of the sender go to seven bidders, each paying its bid in Blur Pool",
    options,
    () => {
      const { transaction, trades } = blur(
        "0xb5c56b4213325cb3fba274d0467b40ab28d9d475ba4a652b46943251c3c0d697",
      );
      const bid = (buyer: Address, tokenId: bigint, hundredths: bigint) => ({
        kind: "sale",
        tokenId,
        seller: transaction.from,
        buyer,
        native: 0n,
        fungible: [{ token: BLUR_POOL, amount: hundredths * 10n ** 16n }],
      });
      assert.deepEqual(trades.map(summary), [
        bid("0x486df54de19dca684656d55b8202c68b8abb2ebc", 7247n, 31n),
        bid("0x5f1ee29361206f1a129e808736f11598356c6031", 4443n, 28n),
        bid("0x5f1ee29361206f1a129e808736f11598356c6031", 4206n, 28n),
        bid("0x8161fa4243335db21734ed9e33180fa19a3bb688", 5987n, 30n),
        bid("0xa69833b9fda816f1bfc79517e7932e64708df0dd", 2042n, 28n),
        bid("0xa69833b9fda816f1bfc79517e7932e64708df0dd", 823n, 28n),
        bid("0xc502c07f7f537f47470071fd59cd8287238761aa", 5465n, 28n),
        bid("0xc820d1eb1189ecd50e9be5ae8f813d017fc9c5dd", 322n, 29n),
        bid("0xd2205aa882e005066b32764cf6748bd07bdcf788", 4512n, 28n),
      ]);
      // The seller was paid 2.451 and the fee 0.129 of the 2.58 the bidders paid.
      assert.equal(sum(trades.map((t) => t.fungible[0]?.amount ?? 0n)), 258n * 10n ** 16n);
      assert.ok(trades.every((t) => t.market === "blur"));
    },
  );
});

describe("two complete mainnet blocks without traces (ethereum-etl 17173049-17173050)", () => {
  const dir = new URL("../fixtures/realdata/ethereum-etl/blocks_17173049_17173050/", import.meta.url);
  const lines = (name: string) =>
    readFileSync(new URL(name, dir), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "");
  const logs: ChainLog[] = lines("expected_logs.json").map((line) => {
    const l = JSON.parse(line);
    return {
      address: l.address.toLowerCase(),
      topics: l.topics,
      data: l.data,
      blockNumber: l.block_number,
      blockHash: l.block_hash,
      logIndex: l.log_index,
      transactionHash: l.transaction_hash,
      transactionIndex: l.transaction_index,
    };
  });
  // Values are JSON numbers past 2**53: quoted before parsing to keep every digit.
  const transactions: RecordedTransaction[] = lines("expected_transactions.json").map((line) => {
    const t = JSON.parse(line.replace(/"value": (\d+)/, '"value": "$1"'));
    return { hash: t.hash, from: t.from_address, to: t.to_address, value: BigInt(t.value) };
  });
  // The recorded traces are of other blocks: the transactions' values are all that is known.
  const recorded = recordedSales({ logs, native: undefined, transactions });
  const trades = tradesOf(recorded.sales);

  test("every transfer log is read", () => {
    assert.equal(logs.length, 681);
    assert.deepEqual(recorded.unread, []);
  });

  test("exactly one Blur sale and one Seaport sale", () => {
    const sales = trades.filter((t) => t.kind === "sale");
    assert.deepEqual(
      sales.map((t) => ({ ...summary(t), contract: t.contract, market: t.market, txHash: t.txHash })),
      [
        {
          // A Blend loan's locked Azuki sold to a Blur bid: the lending contract held it and is
          // paid the 16.3 Blur Pool bid, passed on to the lender and the borrower.
          kind: "sale",
          tokenId: 1527n,
          seller: "0x29469395eaf6f95920e59f858042f0e28d98a20b",
          buyer: "0x63e0605491bda6e4c1c37cf818a45b836faf46ee",
          native: 0n,
          fungible: [{ token: BLUR_POOL, amount: 163n * 10n ** 17n }],
          contract: "0xed5af388653567af2f388e6224dc7c4b3241c544",
          market: "blur",
          txHash: "0x63fd57422f2051d8307eca6fa1e2874759bef24549be34cc820a443efc5f9e90",
        },
        {
          kind: "sale",
          tokenId: 733n,
          seller: "0xacccd6093da4357049158e84c62f13bb95a3db34",
          buyer: "0x31c0b8dbacaf08da902e3117c346afc0128d2ed7",
          native: 37n * 10n ** 16n,
          fungible: [],
          contract: "0x4e3f914246f55fc4f55ee2882bf70c72a8f427cf",
          market: "seaport",
          txHash: "0x42ace258a44863bdbe83eb5dad6f999e5b6ab775b38529db5a3af4753970fc3c",
        },
      ],
    );
    assert.deepEqual(
      sales.map((t) => t.priceFromTransactionValue),
      [true, true],
    );
  });

  test("the rest are paid mints, never sales", () => {
    const others = trades.filter((t) => t.kind !== "sale");
    assert.deepEqual(
      others.map((t) => [t.kind, t.txHash.slice(0, 10), t.tokenId, t.native]),
      [
        ["mint", "0xf9ce0892", 894n, 2n * 10n ** 15n],
        ["mint", "0xf9ce0892", 895n, 2n * 10n ** 15n],
        ["mint", "0xf9ce0892", 896n, 2n * 10n ** 15n],
        ["mint", "0xf9ce0892", 897n, 2n * 10n ** 15n],
        ["mint", "0xf9ce0892", 898n, 2n * 10n ** 15n],
        ["mint", "0x038d6b45", 0n, 69n * 10n ** 13n],
      ],
    );
  });
});

describe("blocks recorded as traces only (mev-inspect-py)", () => {
  /** A block's SaleTransactions, with NFT transfers as its successful transfer calls logged them. */
  function block(number: number) {
    const url = new URL(`../fixtures/realdata/mev-inspect-blocks/${number}.json`, import.meta.url);
    const frames = (JSON.parse(readFileSync(url, "utf8")).traces as Record<string, unknown>[]).map(
      camelCaseFrame,
    );
    const transactions: RecordedTransaction[] = frames
      .filter((f) => typeof f.transactionHash === "string" && (f.traceAddress as number[]).length === 0)
      .map((f) => {
        const action = f.action as Record<string, string>;
        return {
          hash: f.transactionHash as Hex,
          from: action.from as Address,
          to: (action.to ?? null) as Address | null,
          value: BigInt(action.value ?? 0),
        };
      });
    const native = nativeFromParity(frames, number);
    const recorded = recordedSales({ logs: nftLogsFromCalls(frames), native, transactions });
    return { frames, native, sales: recorded.sales, trades: tradesOf(recorded.sales) };
  }

  const sale = (txHash: string, tokenId: bigint, seller: string, buyer: string, native: bigint) => ({
    txHash,
    tokenId,
    seller,
    buyer,
    native,
  });
  const brief = (t: Trade) => ({
    txHash: t.txHash,
    tokenId: t.tokenId,
    seller: t.seller,
    buyer: t.buyer,
    native: t.native,
  });

  test("15049646: seven Seaport 1.1 sales and one Wyvern 2.3 sale, paid what each sent", () => {
    const { trades } = block(15049646);
    assert.ok(trades.every((t) => t.kind === "sale"));
    assert.deepEqual(trades.map(brief), [
      sale(
        "0x391cf6fe82b933fd8e2f4f5a2061140d5da84deb71463d519ff160b471f59bed",
        942n,
        "0xd1088e6697ff3612d22e6f32116b700412b39b89",
        "0x8d0fd2c4081ca53db31346229fcdb1e5dc800c6a",
        11n * 10n ** 16n,
      ),
      sale(
        "0x53e7f28fb42afa494b2d139198e75ef2bf8db24bffd89f17e89dc8546b97773e",
        11099n,
        "0xddcb509fe6e15ec45a35492686947aff08bf58e1",
        "0x7eed44707e146ac9d015993e2d169842bc3ef959",
        3492n * 10n ** 14n,
      ),
      sale(
        "0x437d51041bb976dd744aef66b80887707faf8b47d6f966046a478b703a401172",
        6146n,
        "0x8f4fb758c38f7b72bb2f30058f90e6b264bf06d9",
        "0x73566a07202b9216c733f4fbbf78d71cfa637005",
        8n * 10n ** 15n,
      ),
      // matchOrders: 127.5 ETH, 117.9375 of it to the seller.
      sale(
        "0xa7c21a094b4805022132a42569d5dcf56a57d65219153c1340d0e829cf982e09",
        15309n,
        "0x019faa112625376fbb332e43aa5af41d626478b4",
        "0xe03a2302a91882d2fc39118e955d5f2c301cb0d0",
        1275n * 10n ** 17n,
      ),
      sale(
        "0xa217477043844a9d359a2e47a3aa4e001c54fc33ff2f314742f0afde7b0b7f77",
        520n,
        "0xc235a646ea5284947ff5f351b0a23d1bcbbee6fe",
        "0x97d12ae4c3403e06ddf3ec340876493db8597940",
        15n * 10n ** 15n,
      ),
      sale(
        "0x8e1cbb32cf36a7e48763c744a17f989029afa0a4433bc8b133f208dde983550a",
        8760n,
        "0xcf2092936680cbf428d8dd44393527ac2705622e",
        "0xf1aa947678d9772ad66cc387a922a107639d80ef",
        32n * 10n ** 16n,
      ),
      sale(
        "0x3eae17591c171e0284b67f9148df85cde1bc35cb213430a10d50e082683f6f0a",
        549n,
        "0x88abe4cc3662fb13dfb9d6bd43d77b9bd92bd547",
        "0x32845e613daefc84255a9db0590a0fb57d624d5b",
        14n * 10n ** 16n,
      ),
      // fulfillAdvancedOrder for another recipient: the sender paid for it.
      sale(
        "0x7297089a67c5b75fb091430d0ff5b5fe61e906e36db800374ba7f7e78c215d84",
        3368n,
        "0x2d3178af3dfbb679716cc14e245be0a9e5945500",
        "0x5427b2c4f307d2d0eeac84cb80fee1ec42ba77df",
        34n * 10n ** 16n,
      ),
    ]);
    assert.equal(trades[7]?.attributedBy, "ATTRIBUTED_BY_RECIPIENT_NO_PAYMENT");
  });

  test("15049646: the fulfillBasicOrder that ran out of gas sold nothing", () => {
    const failed: Hex = "0xac8d945bf57e1f7c6edbcfd9b8d236ec8c9a6c4dc53a815c8167a4a8b3c9b191";
    const { frames, native, sales } = block(15049646);
    assert.equal(
      sales.some((s) => s.txHash === failed),
      false,
    );
    assert.deepEqual(
      native.filter((n) => n.txHash === failed),
      [],
      "its 106 ETH never moved",
    );
    // Had its BAYC transfer been logged, the traces still say nothing was paid for it.
    const call = frames.find(
      (f) => f.transactionHash === failed && (f.traceAddress as number[]).join() === "1,0",
    ) as { action: { to: Address; input: string } };
    const arg = (i: number) => `0x${call.action.input.slice(10 + i * 64, 74 + i * 64)}`;
    const log = transferLog(
      { blockNumber: 15049646, txHash: failed, txIndex: 46, logIndex: 0 },
      call.action.to,
      `0x${arg(0).slice(-40)}`,
      `0x${arg(1).slice(-40)}`,
      BigInt(arg(2)),
    );
    const top = frames.find(
      (f) => f.transactionHash === failed && (f.traceAddress as number[]).length === 0,
    ) as {
      action: { from: Address; to: Address; value: Hex };
    };
    const forced = recordedSales({
      logs: [log],
      native,
      transactions: [
        { hash: failed, from: top.action.from, to: top.action.to, value: BigInt(top.action.value) },
      ],
    });
    assert.equal(forced.sales[0]?.value, 106n * ETH);
    assert.deepEqual(tradesOf(forced.sales), []);
  });

  test("13404932: three Wyvern sales at 0.244, 0.111 and 0.42 ETH, and the punk offer is none", () => {
    const { trades } = block(13404932);
    assert.ok(trades.every((t) => t.kind === "sale" && t.attributedBy === "ATTRIBUTED_BY_SINGLE_TRANSFER"));
    assert.deepEqual(trades.map(brief), [
      sale(
        "0x6b266db310cfdd0cda0830d6b060e147330cb364570b18e732eecfde7aecdf55",
        601n,
        "0x4f9bd31e47f185d823c7cd7199dca341539b1a4e",
        "0x51eb5ea3fe56e37ece8942a2cc02cd8353ce358b",
        244n * 10n ** 15n,
      ),
      sale(
        "0x6ba74eba3d4ab42e58762fe1bd42ad0ea63183cef415e0802960f536a8d41993",
        4548n,
        "0x45147f6f7e598d0efe285ef3ee3c30c944d3cdb2",
        "0xa72d230bbe81af9511fab33773dfb64fafe150fe",
        111n * 10n ** 15n,
      ),
      sale(
        "0x943102e9cef6e0120fae35985b26db75dece048f7e9ab3417fbb7d919f3918b8",
        1489n,
        "0x47c48d988a4aa6717377ad0eab587bb113299035",
        "0xe0c9f660bc79eb8bbe00fbd8872e47261f443a67",
        42n * 10n ** 16n,
      ),
    ]);
  });
});

describe("an aggregator buying through Wyvern (Reservoir's Genie fixture)", () => {
  const url = new URL(
    "../fixtures/realdata/reservoir-indexer/wyvern-genie-multisale-payments.json",
    import.meta.url,
  );
  const recording = JSON.parse(readFileSync(url, "utf8")) as {
    payments: { from: string; to: string; token: string; amount: string }[];
    fillEvents: { maker: string; price: string; contract: string; tokenId: string }[];
  };
  const at = {
    blockNumber: 13837190,
    txHash: "0x67533a3c28f93589b9899e2a822f3658adf8aa9e754d807fba0e80a46ca0c7d4" as Hex,
    txIndex: 181,
  };
  const buyer: Address = "0xc3f3e5265b5eda10a602da57ec3a8a1e582c549c";
  const native: NativeTransfer[] = [];
  const logs: ChainLog[] = [];
  for (const p of recording.payments) {
    const [kind, contract, tokenId] = p.token.split(":") as [string, Address, string];
    const from = p.from.toLowerCase() as Address;
    const to = p.to.toLowerCase() as Address;
    if (kind === "native")
      native.push({ txHash: at.txHash, from, to, value: BigInt(p.amount), blockNumber: 0, txIndex: 0 });
    else
      logs.push(
        transferLog(
          { ...at, logIndex: logs.length },
          contract,
          from,
          to,
          BigInt(tokenId),
          kind === "erc1155" ? BigInt(p.amount) : undefined,
        ),
      );
  }
  // The buyer's call to the aggregator is the first movement, as the payments list it.
  const first = native[0] as NativeTransfer;
  const recorded = recordedSales({
    logs,
    native,
    transactions: [{ hash: at.txHash, from: first.from, to: first.to, value: first.value }],
  });
  const trades = tradesOf(recorded.sales);

  test("each Wyvern fill is priced at its order's price, not at its seller's share of the total", () => {
    assert.equal(first.from, buyer);
    assert.equal(recording.fillEvents.length, 3);
    for (const fill of recording.fillEvents) {
      const trade = trades.find((t) => t.contract === fill.contract && t.tokenId === BigInt(fill.tokenId));
      assert.ok(trade, `${fill.contract}:${fill.tokenId} is traded`);
      assert.equal(trade.kind, "sale");
      assert.equal(trade.seller, fill.maker);
      assert.equal(trade.buyer, buyer);
      assert.equal(trade.native, BigInt(fill.price), `${fill.contract}:${fill.tokenId}`);
    }
  });

  test("the fourth NFT, an ERC-1155 bought in the same call, gets the rest", () => {
    assert.equal(trades.length, 4);
    const erc1155 = trades.find((t) => t.contract === "0x28472a58a490c5e09a238847f66a68a47cc76f0f");
    assert.equal(erc1155?.native, 898n * 10n ** 15n);
    assert.equal(erc1155?.seller, "0xf78a6fb8002a19a500a77ca89d28a3123e9f6b13");
    assert.equal(sum(trades.map((t) => t.native)), 69_148n * 10n ** 15n);
    assert.ok(trades.every((t) => t.attributedBy === "ATTRIBUTED_BY_SELLER_PROCEEDS"));
  });
});
