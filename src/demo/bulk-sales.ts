/**
 * Fills an anvil with a large number of NFT sales of mixed kinds as fast as it will take them, for
 * ingestion benchmarks:
 * - listings on an escrow market bought with ETH, which the market splits between the seller, its
 *   fee recipient and the collection's royalty recipient; some listings are bundles of several
 *   NFTs from one seller for one price;
 * - direct deals settled many to a transaction by a `DealDesk`, each deal with its own seller and
 *   buyer: in ETH from a buyer's `Purse`, or in WETH or a 6-decimal stablecoin pulled with
 *   transferFrom.
 * Within one transaction no account takes part in two deals, so each NFT is one sale of its own.
 * Tokens are minted as they are needed, and bought tokens are sold again.
 *
 * Expects anvil started with `--disable-block-gas-limit`, like the transfer generator. Automine is
 * turned off while it runs and restored afterwards.
 */
import { decodeFunctionResult, keccak256, maxUint256, parseEther, toHex } from "viem";
import { type Address, numberToHex, wordToAddress } from "../core/hex.ts";
import { loadArtifact, runtimeCode } from "../devchain/artifacts.ts";
import { devAddress } from "../devchain/deploy.ts";
import { BlockBuilder, type TxRequest } from "./block-builder.ts";
import { callTx, deployTx, encodeCall, erc721MintBatchGas, GAS } from "./contracts.ts";
import { Prng } from "./prng.ts";
import type { RpcCall } from "./rpc.ts";

export interface BulkSalesOptions {
  rpcUrl: string;
  /** Make at least this many sales (rows of `kind = 'sale'` once indexed). */
  sales: number;
  seed?: number | string;
  /** Accounts that sell, and buy with ETH on the market or with ERC-20s. Default 300. */
  traders?: number;
  /** Contract wallets that buy with ETH in direct deals. Default 200. */
  purses?: number;
  /** ERC-721 collections. Default 3. */
  collections?: number;
  /** Direct deals per DealDesk transaction. Default 25. */
  dealsPerTx?: number;
  /** Most transactions per block. Default 40. */
  txsPerBlock?: number;
  onProgress?: (progress: { sales: number; blocks: number; transactions: number }) => void;
}

export interface BulkSalesResult {
  sales: number;
  byKind: { market: number; bundled: number; dealEth: number; dealWeth: number; dealStable: number };
  /** ERC-721 Transfer logs: mints and the sales' deliveries. */
  nftEvents: number;
  mints: number;
  transactions: number;
  blocks: number;
  firstBlock: number;
  lastBlock: number;
  elapsedMs: number;
}

/** Shares of the sales, by kind; direct deals in ETH take the rest. */
const MARKET_SHARE = 0.15;
const BUNDLED_SHARE = 0.1;
const WETH_SHARE = 0.25;
const STABLE_SHARE = 0.1;
const BUNDLE_SIZE = 3;
const MINT_BATCH = 100;
const MARKET_FEE_BPS = 250;
const ROYALTY_BPS = 500;
const ACCOUNT_BALANCE = parseEther("10000000");
const TRADER_WETH = parseEther("1000000");
/** A million dollars in the stablecoin's 6 decimals. */
const TRADER_STABLE = 1_000_000_000_000n;
const DEAL_GAS_BASE = 60_000n;
const DEAL_GAS = 160_000n;
/** Setup transactions per block: their receipts are checked, which anvil is slow at for larger blocks. */
const SETUP_TXS_PER_BLOCK = 1000;

interface Token {
  collection: number;
  id: bigint;
}

interface Listing {
  seller: Address;
  tokens: Token[];
  price: bigint;
  id?: bigint;
}

interface Check {
  call: RpcCall;
  expect: Address;
  what: string;
}

/** An address no key is known for: anvil takes transactions from it by impersonation. */
function accountAt(role: string, index: number): Address {
  return wordToAddress(keccak256(toHex(`mintlens bulk ${role} ${index}`)));
}

export async function generateBulkSales(options: BulkSalesOptions): Promise<BulkSalesResult> {
  const started = performance.now();
  if (!(options.sales > 0)) throw new RangeError("sales must be positive");
  const prng = new Prng(options.seed ?? "bulk-sales");
  const collectionCount = Math.max(1, options.collections ?? 3);
  const dealsPerTx = Math.max(1, options.dealsPerTx ?? 25);
  const txsPerBlock = Math.max(4, options.txsPerBlock ?? 40);
  const traders = Array.from({ length: Math.max(2 * dealsPerTx + 2, options.traders ?? 300) }, (_, i) =>
    accountAt("trader", i),
  );
  const purses = Array.from({ length: Math.max(dealsPerTx, options.purses ?? 200) }, (_, i) =>
    accountAt("purse", i),
  );
  const feeRecipient = accountAt("fee", 0);
  const builder = new BlockBuilder(options.rpcUrl);
  const rpc = builder.rpc;
  const deployer = devAddress(0);
  const purseCode = runtimeCode("Purse");
  await rpc.batch([
    ...[deployer, ...traders].flatMap((address) => [
      { method: "anvil_setBalance", params: [address, numberToHex(ACCOUNT_BALANCE)] },
      { method: "anvil_impersonateAccount", params: [address] },
    ]),
    // A purse's code is set in place rather than deployed: its deployments are nothing to measure.
    ...purses.flatMap((address) => [
      { method: "anvil_setBalance", params: [address, numberToHex(ACCOUNT_BALANCE)] },
      { method: "anvil_setCode", params: [address, purseCode] },
    ]),
  ]);

  const result: BulkSalesResult = {
    sales: 0,
    byKind: { market: 0, bundled: 0, dealEth: 0, dealWeth: 0, dealStable: 0 },
    nftEvents: 0,
    mints: 0,
    transactions: 0,
    blocks: 0,
    firstBlock: 0,
    lastBlock: 0,
    elapsedMs: 0,
  };
  const noteBlock = (number: number, transactions: number) => {
    if (result.firstBlock === 0) result.firstBlock = number;
    result.lastBlock = number;
    result.blocks++;
    result.transactions += transactions;
  };
  const setupBlocks = async (txs: readonly TxRequest[]) => {
    for (let i = 0; i < txs.length; i += SETUP_TXS_PER_BLOCK) {
      const chunk = txs.slice(i, i + SETUP_TXS_PER_BLOCK);
      await builder.addMany(chunk);
      noteBlock((await builder.mine()).number, chunk.length);
    }
  };

  const automine = await rpc.call<boolean>("anvil_getAutomine");
  await rpc.call("evm_setAutomine", [false]);
  try {
    const collections: Address[] = [];
    for (let c = 0; c < collectionCount; c++) {
      collections.push(await builder.nextContractAddress(deployer));
      await builder.add(
        deployTx(deployer, "TestERC721", [`Sales ${c + 1}`, `SALE${c + 1}`], GAS.deployErc721),
      );
    }
    const weth = await builder.nextContractAddress(deployer);
    await builder.add(deployTx(deployer, "WETH9", [], GAS.deployErc20));
    const stable = await builder.nextContractAddress(deployer);
    await builder.add(deployTx(deployer, "TestStablecoin", ["Test Dollar", "TUSD"], GAS.deployErc20));
    const market = await builder.nextContractAddress(deployer);
    await builder.add(deployTx(deployer, "EscrowMarket", [feeRecipient, MARKET_FEE_BPS], GAS.deployErc20));
    const desk = await builder.nextContractAddress(deployer);
    await builder.add(deployTx(deployer, "DealDesk", [], GAS.deployErc20));
    noteBlock((await builder.mine()).number, collectionCount + 4);

    await setupBlocks([
      ...collections.map((nft, c) =>
        callTx(
          deployer,
          market,
          "EscrowMarket",
          "setRoyalty",
          [nft, accountAt("creator", c), ROYALTY_BPS],
          100_000n,
        ),
      ),
      ...traders.flatMap((trader) => [
        ...collections.flatMap((nft) => [
          callTx(trader, nft, "TestERC721", "setApprovalForAll", [desk, true], GAS.approvalForAll),
          callTx(trader, nft, "TestERC721", "setApprovalForAll", [market, true], GAS.approvalForAll),
        ]),
        callTx(trader, weth, "WETH9", "deposit", [], GAS.erc20Mint, { value: TRADER_WETH }),
        callTx(trader, weth, "WETH9", "approve", [desk, maxUint256], GAS.erc20Approve),
        callTx(trader, stable, "TestStablecoin", "mint", [trader, TRADER_STABLE], GAS.erc20Mint),
        callTx(trader, stable, "TestStablecoin", "approve", [desk, maxUint256], GAS.erc20Approve),
      ]),
    ]);

    const bundledListings = Math.round((options.sales * BUNDLED_SHARE) / BUNDLE_SIZE);
    let marketLeft = Math.round(options.sales * MARKET_SHARE);
    let bundlesLeft = bundledListings;
    let wethLeft = Math.round(options.sales * WETH_SHARE);
    let stableLeft = Math.round(options.sales * STABLE_SHARE);
    let ethLeft = Math.max(0, options.sales - marketLeft - bundlesLeft * BUNDLE_SIZE - wethLeft - stableLeft);
    const dealsLeft = () => ethLeft + wethLeft + stableLeft;

    /** Each trader's tokens that are free to sell: not listed, and not moved in the block being built. */
    const holdings = new Map<Address, Token[]>(traders.map((t) => [t, []]));
    let available = 0;
    const nextIds = collections.map(() => 1n);
    let listingCount = 0n;
    let toBuy: Listing[] = [];

    const ownerCheck = (token: Token, owner: Address): Check => ({
      call: {
        method: "eth_call",
        params: [
          { to: collections[token.collection], data: encodeCall("TestERC721", "ownerOf", [token.id]) },
          "latest",
        ],
      },
      expect: owner,
      what: `owner of token ${token.id} of ${collections[token.collection]}`,
    });
    /** A trader holding at least `count` free tokens, not among `busy`, or undefined. */
    const sellerWith = (count: number, busy: ReadonlySet<Address>): Address | undefined => {
      const start = prng.int(0, traders.length - 1);
      for (let i = 0; i < traders.length; i++) {
        const trader = traders[(start + i) % traders.length] as Address;
        if (!busy.has(trader) && (holdings.get(trader) as Token[]).length >= count) return trader;
      }
      return undefined;
    };
    const traderOtherThan = (busy: ReadonlySet<Address>): Address | undefined => {
      const start = prng.int(0, traders.length - 1);
      for (let i = 0; i < traders.length; i++) {
        const trader = traders[(start + i) % traders.length] as Address;
        if (!busy.has(trader)) return trader;
      }
      return undefined;
    };
    const takeTokens = (seller: Address, count: number): Token[] => {
      const held = holdings.get(seller) as Token[];
      available -= count;
      return held.splice(held.length - count, count);
    };
    const ethPrice = () => parseEther(prng.logUniform(0.005, 3, 0.0001).toFixed(4));
    const stablePrice = () => BigInt(prng.logUniform(5, 5000, 0.01).toFixed(2).replace(".", "")) * 10_000n;

    while (toBuy.length > 0 || marketLeft + bundlesLeft + dealsLeft() > 0) {
      const txs: TxRequest[] = [];
      const checks: Check[] = [];
      /** Tokens that change hands in this block, free again once it is mined. */
      const arriving: { owner: Address; token: Token }[] = [];
      const listed: Listing[] = [];
      const listers = new Set<Address>();
      let sales = 0;
      let nftEvents = 0;

      for (const listing of toBuy) {
        const buyer = traderOtherThan(new Set([listing.seller])) as Address;
        const extra = BigInt(listing.tokens.length - 1);
        txs.push(
          callTx(buyer, market, "EscrowMarket", "buy", [listing.id], GAS.marketBuy + 150_000n * extra, {
            value: listing.price,
          }),
        );
        checks.push(ownerCheck(listing.tokens[0] as Token, buyer));
        for (const token of listing.tokens) arriving.push({ owner: buyer, token });
        sales += listing.tokens.length;
        nftEvents += listing.tokens.length;
        if (listing.tokens.length > 1) result.byKind.bundled += listing.tokens.length;
        else result.byKind.market++;
      }
      toBuy = [];

      // Enough free tokens for a block of deals, minted a block ahead of their sale.
      const wanted = txsPerBlock * dealsPerTx;
      for (let minting = 0; available + minting < wanted && dealsLeft() + marketLeft + bundlesLeft > 0; ) {
        const to = traders[prng.int(0, traders.length - 1)] as Address;
        const collection = prng.int(0, collectionCount - 1);
        const first = nextIds[collection] as bigint;
        nextIds[collection] = first + BigInt(MINT_BATCH);
        const nft = collections[collection] as Address;
        txs.push(
          callTx(
            to,
            nft,
            "TestERC721",
            "mintBatch",
            [to, first, BigInt(MINT_BATCH)],
            erc721MintBatchGas(MINT_BATCH),
          ),
        );
        checks.push(ownerCheck({ collection, id: first + BigInt(MINT_BATCH - 1) }, to));
        for (let i = 0n; i < BigInt(MINT_BATCH); i++)
          arriving.push({ owner: to, token: { collection, id: first + i } });
        minting += MINT_BATCH;
        result.mints += MINT_BATCH;
        nftEvents += MINT_BATCH;
      }

      while (txs.length < txsPerBlock) {
        const listingsLeft = marketLeft + bundlesLeft;
        const deskTxsLeft = Math.ceil(dealsLeft() / dealsPerTx);
        if (listingsLeft + deskTxsLeft === 0) break;
        // Each kind in proportion to the transactions it still needs, so they stay mixed throughout;
        // listings are capped so that their purchases fit the next block.
        if (prng.int(1, listingsLeft + deskTxsLeft) <= listingsLeft && listed.length < txsPerBlock / 2) {
          const size = prng.int(1, listingsLeft) <= bundlesLeft ? BUNDLE_SIZE : 1;
          const seller = sellerWith(size, listers);
          if (seller === undefined) break;
          const tokens = takeTokens(seller, size);
          const price = ethPrice() * BigInt(size);
          const items = tokens.map((t) => ({ nft: collections[t.collection], tokenId: t.id, amount: 0n }));
          txs.push(
            callTx(
              seller,
              market,
              "EscrowMarket",
              "list",
              [items, "0x0000000000000000000000000000000000000000", price],
              GAS.marketList + 100_000n * BigInt(size),
            ),
          );
          listers.add(seller);
          listed.push({ seller, tokens, price });
          if (size > 1) bundlesLeft--;
          else marketLeft--;
          continue;
        }
        if (deskTxsLeft === 0) break;
        const deals: {
          nft: Address;
          tokenId: bigint;
          seller: Address;
          buyer: Address;
          currency: Address;
          price: bigint;
        }[] = [];
        const busy = new Set<Address>();
        let last: { token: Token; buyer: Address } | undefined;
        while (deals.length < dealsPerTx && dealsLeft() > 0) {
          const seller = sellerWith(1, busy);
          if (seller === undefined) break;
          busy.add(seller);
          const kind = prng.weightedIndex([ethLeft, wethLeft, stableLeft]);
          const buyer =
            kind === 0
              ? prng.sample(
                  purses.filter((p) => !busy.has(p)),
                  1,
                )[0]
              : traderOtherThan(busy);
          if (buyer === undefined) break;
          busy.add(buyer);
          const [token] = takeTokens(seller, 1) as [Token];
          const currency =
            kind === 0 ? "0x0000000000000000000000000000000000000000" : kind === 1 ? weth : stable;
          deals.push({
            nft: collections[token.collection] as Address,
            tokenId: token.id,
            seller,
            buyer,
            currency,
            price: kind === 2 ? stablePrice() : ethPrice(),
          });
          // A purse never sells again: what it buys is out of circulation.
          if (kind !== 0) arriving.push({ owner: buyer, token });
          last = { token, buyer };
          if (kind === 0) {
            ethLeft--;
            result.byKind.dealEth++;
          } else if (kind === 1) {
            wethLeft--;
            result.byKind.dealWeth++;
          } else {
            stableLeft--;
            result.byKind.dealStable++;
          }
        }
        if (last === undefined) break;
        txs.push(
          callTx(
            deployer,
            desk,
            "DealDesk",
            "settle",
            [deals],
            DEAL_GAS_BASE + DEAL_GAS * BigInt(deals.length),
          ),
        );
        checks.push(ownerCheck(last.token, last.buyer));
        sales += deals.length;
        nftEvents += deals.length;
      }
      if (txs.length === 0)
        throw new Error("no sale fits: too few tokens are free and none are being minted");

      await builder.addMany(txs);
      // Receipts are slow to build for large blocks; state reads confirm the transactions instead.
      const block = await builder.mine(undefined, { receipts: false });
      const reads = await rpc
        .batch<string>([
          ...checks.map((c) => c.call),
          ...listed.map((_, i) => ({
            method: "eth_call",
            params: [
              { to: market, data: encodeCall("EscrowMarket", "listings", [listingCount + BigInt(i)]) },
              "latest",
            ],
          })),
        ])
        .catch((error: unknown) => {
          throw new Error(
            `block ${block.number}: a transaction did not take effect: ${(error as Error).message}`,
          );
        });
      checks.forEach((check, i) => {
        const actual = wordToAddress(reads[i] ?? "0x");
        if (actual !== check.expect) {
          throw new Error(`block ${block.number}: ${check.what} is ${actual}, expected ${check.expect}`);
        }
      });
      // The block's listings got the next ids in the order the block holds them, which is anvil's
      // to choose: each is matched to its listing by its seller, who lists once per block.
      const bySeller = new Map(listed.map((l) => [l.seller, l]));
      listed.forEach((_, i) => {
        const [seller] = decodeFunctionResult({
          abi: loadArtifact("EscrowMarket").abi,
          functionName: "listings",
          data: reads[checks.length + i] as `0x${string}`,
        }) as readonly [string, ...unknown[]];
        const listing = bySeller.get(seller.toLowerCase() as Address);
        if (!listing)
          throw new Error(`block ${block.number}: listing ${listingCount + BigInt(i)} is not one sent`);
        listing.id = listingCount + BigInt(i);
      });
      listingCount += BigInt(listed.length);
      toBuy = listed;
      for (const { owner, token } of arriving) {
        (holdings.get(owner) as Token[]).push(token);
        available++;
      }
      noteBlock(block.number, txs.length);
      result.sales += sales;
      result.nftEvents += nftEvents;
      options.onProgress?.({ sales: result.sales, blocks: result.blocks, transactions: result.transactions });
    }
  } finally {
    await rpc.call("evm_setAutomine", [automine]);
  }
  result.elapsedMs = Math.round(performance.now() - started);
  return result;
}
