import {
  concat,
  decodeEventLog,
  encodeFunctionData,
  encodePacked,
  pad,
  parseAbi,
  size,
  type TransactionReceipt,
} from "viem";
import { parseLogs } from "../../src/chain/logs.ts";
import { parseParityBlockTraceData } from "../../src/chain/traces.ts";
import { type Address, type Hex, ZERO_ADDRESS } from "../../src/core/hex.ts";
import type { ContractType } from "../../src/core/types.ts";
import { type ContractName, loadArtifact } from "../../src/devchain/artifacts.ts";
import {
  type DevChain,
  deployArtifact,
  devAddress,
  fundAndUnlock,
  sendContractTx,
  waitForReceipt,
} from "../../src/devchain/deploy.ts";
import { decodeLogs } from "../../src/indexer/decode/decode-logs.ts";
import type { TypesOf } from "../../src/indexer/decode/readings.ts";
import type { BidLookup } from "../../src/sales/attribute.ts";
import { saleTransactions, type TransactionInfo } from "../../src/sales/transactions.ts";
import type {
  AttributedBy,
  MarketEvent,
  PunkBid,
  SaleTransaction,
  TokenAmount,
  Trade,
} from "../../src/sales/types.ts";

/**
 * Sales played on a dev chain through small, readable contracts (contracts/src), each with the
 * trades it truly made, in wei: what each buyer paid, as the contracts' own arithmetic fixes it.
 * Expectations are written from the scenario, never computed by the code under test, so the same
 * list can check attribution directly and, later, the sales an indexing run stores.
 */

export type ExpectedTrade = Pick<
  Trade,
  "kind" | "contract" | "tokenId" | "seller" | "buyer" | "quantity" | "native" | "attributedBy"
> & { fungible: TokenAmount[] };

export interface SaleScenario {
  /** The case number and a few words, e.g. "4 bundle of one collection". */
  name: string;
  txHash: Hex;
  /** The transaction reverted: it moved nothing. */
  reverted: boolean;
  expected: ExpectedTrade[];
  /** Open CryptoPunks bids when the transaction ran: what an accepted bid is paid. */
  bids: PunkBid[];
}

export interface SaleScenarioWorld {
  scenarios: SaleScenario[];
  /** Every contract deployed, by role. */
  contracts: Record<ContractRole, Address>;
  /** The types an indexer's classification gives the contracts that log transfers. */
  typesOf: TypesOf;
}

type ContractRole =
  | "apes"
  | "cats"
  | "items"
  | "minted"
  | "punks"
  | "weth"
  | "usdc"
  | "pool"
  | "escrow"
  | "bids"
  | "aggregator"
  | "relay"
  | "lender"
  | "swap"
  | "game"
  | "entryPoint"
  | "accountFactory"
  | "account"
  | "safeSingleton"
  | "multiSend"
  | "safeFactory"
  | "safe"
  | "factory"
  | "router"
  | "anyToken"
  | "loans"
  | "desk"
  | "sellerSafe";

const ETHER = 10n ** 18n;
const eth = (milli: bigint) => (milli * ETHER) / 1000n;

/** Market fee and creator royalties, in basis points, as the markets are deployed with them. */
export const FEE_BPS = 250n;
export const APE_ROYALTY_BPS = 500n;
export const CAT_ROYALTY_BPS = 1000n;
export const MINT_PRICE = eth(50n);

export const ACTORS = {
  deployer: devAddress(0),
  alice: devAddress(1),
  bob: devAddress(2),
  carol: devAddress(3),
  dave: devAddress(4),
  erin: devAddress(5),
  treasury: devAddress(6),
  creator: devAddress(7),
  bot: devAddress(8),
} as const;

const { deployer, alice, bob, carol, dave, erin, treasury, creator, bot } = ACTORS;

/** Accounts that only receive: money a smart account sends elsewhere, and an aggregator's fee. */
export const ELSEWHERE: Address = "0x000000000000000000000000000000000000e15e";
export const AGGREGATOR_FEES: Address = "0x0000000000000000000000000000000000a99fee";

/** Deploys the contracts, plays every case once, and returns the cases with their transactions. */
export async function playSaleScenarios(chain: DevChain): Promise<SaleScenarioWorld> {
  const deploy = async (name: ContractName, args: unknown[] = [], from: Address = deployer) =>
    (await deployArtifact(chain, name, args, { from })).address;
  const c: Record<ContractRole, Address> = {
    apes: await deploy("TestERC721", ["Apes", "APE"]),
    cats: await deploy("TestERC721", ["Cats", "CAT"]),
    items: await deploy("TestERC1155", ["https://nft.example/{id}"]),
    minted: await deploy("PaidMintERC721", ["Minted", "MINT", MINT_PRICE]),
    punks: await deploy("CryptoPunksMarket", [100n]),
    weth: await deploy("WETH9"),
    usdc: await deploy("TestStablecoin", ["USD Coin", "USDC"]),
    pool: await deploy("PeggedPool"),
    escrow: await deploy("EscrowMarket", [treasury, Number(FEE_BPS)]),
    bids: await deploy("BidMarket", [treasury, Number(FEE_BPS)]),
    aggregator: await deploy("SweepAggregator"),
    relay: await deploy("MevRelay", [], bot),
    lender: await deploy("FlashLender"),
    swap: await deploy("NftSwap"),
    // A currency no pool prices: its sales are unpriced.
    game: await deploy("TestStablecoin", ["Game Gold", "GOLD"]),
    entryPoint: await deploy("EntryPointV07"),
    accountFactory: ZERO_ADDRESS,
    account: ZERO_ADDRESS,
    safeSingleton: await deploy("SafeV150"),
    multiSend: await deploy("MultiSendV150"),
    safeFactory: await deploy("SafeProxyFactoryV150"),
    safe: ZERO_ADDRESS,
    factory: await deploy("UniswapV2Factory", [deployer]),
    router: await deploy("SwapRouter"),
    anyToken: await deploy("AnyTokenAggregator", [AGGREGATOR_FEES, 100n]),
    loans: await deploy("LoanDesk"),
    desk: await deploy("DealDesk"),
    sellerSafe: ZERO_ADDRESS,
  };
  c.accountFactory = await deploy("SimpleAccountFactoryV07", [c.entryPoint]);
  const nameOf = new Map<Address, ContractName>([
    [c.apes, "TestERC721"],
    [c.cats, "TestERC721"],
    [c.items, "TestERC1155"],
    [c.minted, "PaidMintERC721"],
    [c.punks, "CryptoPunksMarket"],
    [c.weth, "WETH9"],
    [c.usdc, "TestStablecoin"],
    [c.pool, "PeggedPool"],
    [c.escrow, "EscrowMarket"],
    [c.bids, "BidMarket"],
    [c.aggregator, "SweepAggregator"],
    [c.relay, "MevRelay"],
    [c.lender, "FlashLender"],
    [c.game, "TestStablecoin"],
    [c.swap, "NftSwap"],
    [c.entryPoint, "EntryPointV07"],
    [c.accountFactory, "SimpleAccountFactoryV07"],
    [c.safeFactory, "SafeProxyFactoryV150"],
    [c.factory, "UniswapV2Factory"],
    [c.router, "SwapRouter"],
    [c.anyToken, "AnyTokenAggregator"],
    [c.loans, "LoanDesk"],
    [c.desk, "DealDesk"],
  ]);
  const send = (to: Address, functionName: string, args: unknown[], from: Address, value?: bigint) =>
    sendContractTx(chain, {
      address: to,
      abi: loadArtifact(nameOf.get(to) as ContractName).abi,
      functionName,
      args,
      from,
      value,
    });

  // Setup: holdings, approvals, royalties, balances in the payment tokens.
  for (const market of [c.escrow, c.bids]) {
    await send(market, "setRoyalty", [c.apes, creator, Number(APE_ROYALTY_BPS)], deployer);
    await send(market, "setRoyalty", [c.cats, creator, Number(CAT_ROYALTY_BPS)], deployer);
  }
  await send(c.apes, "mintBatch", [alice, 1n, 5n], deployer);
  for (const [holder, id] of [
    [alice, 21n],
    [alice, 23n],
    [alice, 25n],
    [alice, 27n],
    [alice, 10n],
    [bob, 11n],
    [carol, 12n],
    [dave, 20n],
    [carol, 22n],
    [bob, 24n],
    [dave, 26n],
    [carol, 28n],
    [bob, 29n],
    [alice, 40n],
    [alice, 41n],
  ] as const) {
    await send(c.apes, "mint", [holder, id], deployer);
  }
  await send(c.cats, "mintBatch", [alice, 1n, 2n], deployer);
  await send(c.cats, "mint", [alice, 3n], deployer);
  await send(c.cats, "mint", [bob, 5n], deployer);
  await send(c.items, "mint", [alice, 7n, 10n, "0x"], deployer);
  for (const [holder, operator] of [
    [alice, c.escrow],
    [bob, c.escrow],
    [carol, c.escrow],
    [dave, c.escrow],
    [dave, c.bids],
    [bob, c.bids],
    [bob, c.lender],
    [carol, c.lender],
    [alice, c.swap],
  ] as const) {
    await send(c.apes, "setApprovalForAll", [operator, true], holder);
  }
  await send(c.cats, "setApprovalForAll", [c.escrow, true], alice);
  await send(c.cats, "setApprovalForAll", [c.escrow, true], bob);
  await send(c.cats, "setApprovalForAll", [c.swap, true], bob);
  await send(c.items, "setApprovalForAll", [c.escrow, true], alice);
  await send(c.weth, "deposit", [], erin, eth(5000n));
  await send(c.weth, "approve", [c.bids, 2n ** 256n - 1n], erin);
  await send(c.usdc, "mint", [bob, 5_000_000_000n], deployer);
  await send(c.usdc, "approve", [c.escrow, 2n ** 256n - 1n], bob);
  await send(c.game, "mint", [bob, 10n ** 24n], deployer);
  await send(c.game, "approve", [c.escrow, 2n ** 256n - 1n], bob);
  await send(c.pool, "deposit", [], dave, eth(3000n));
  await send(c.pool, "approve", [c.bids, 2n ** 256n - 1n], dave);
  await send(c.punks, "setInitialOwner", [alice, 0n], deployer);
  await send(c.punks, "setInitialOwner", [bob, 1n], deployer);
  await send(c.punks, "allInitialOwnersAssigned", [], deployer);

  let nextListing = 0n;
  const list = async (
    seller: Address,
    items: { nft: Address; tokenId: bigint; amount?: bigint }[],
    currency: Address,
    price: bigint,
  ) => {
    const listing = items.map((i) => ({ nft: i.nft, tokenId: i.tokenId, amount: i.amount ?? 0n }));
    await send(c.escrow, "list", [listing, currency, price], seller);
    return nextListing++;
  };
  let nextBid = 0n;
  const bid = async (bidder: Address, currency: Address, nft: Address, tokenId: bigint, price: bigint) => {
    await send(c.bids, "enterBid", [currency, nft, tokenId, price], bidder);
    return nextBid++;
  };
  const hashOf = (r: TransactionReceipt) => r.transactionHash.toLowerCase() as Hex;
  const scenarios: SaleScenario[] = [];
  const scenario = (
    name: string,
    receipt: TransactionReceipt,
    expected: ExpectedTrade[],
    extra: Partial<SaleScenario> = {},
  ) => {
    scenarios.push({ name, txHash: hashOf(receipt), reverted: false, expected, bids: [], ...extra });
  };
  const sale = (
    nft: Address,
    tokenId: bigint,
    seller: Address,
    buyer: Address,
    paid: { native?: bigint; fungible?: TokenAmount[] },
    attributedBy: AttributedBy = "ATTRIBUTED_BY_SINGLE_TRANSFER",
    quantity = 1n,
  ): ExpectedTrade => ({
    kind: "sale",
    contract: nft,
    tokenId,
    seller,
    buyer,
    quantity,
    native: paid.native ?? 0n,
    fungible: paid.fungible ?? [],
    attributedBy,
  });

  // 1. Paid in ETH to the market, which pays the seller 92.5%, its treasury and the creator.
  {
    const price = eth(1500n);
    const id = await list(alice, [{ nft: c.apes, tokenId: 4n }], ZERO_ADDRESS, price);
    const r = await send(c.escrow, "buy", [id], bob, price);
    scenario("1 plain sale through a market taking fee and royalty", r, [
      sale(c.apes, 4n, alice, bob, { native: price }),
    ]);
  }

  // 2. The seller sends the transaction; the buyer's WETH is pulled to seller, treasury, creator.
  {
    const price = eth(2000n);
    const b = await bid(erin, c.weth, c.apes, 20n, price);
    const r = await send(c.bids, "acceptBid", [b], dave);
    scenario("2 accepted WETH bid", r, [
      sale(c.apes, 20n, dave, erin, { fungible: [{ token: c.weth, amount: price }] }),
    ]);
  }

  // 3. 1234.567891 USDC: the fee and royalty round down in the 6-decimals unit.
  {
    const price = 1_234_567_891n;
    const id = await list(alice, [{ nft: c.apes, tokenId: 21n }], c.usdc, price);
    const r = await send(c.escrow, "buy", [id], bob);
    scenario("3 sale paid in a 6-decimals stablecoin", r, [
      sale(c.apes, 21n, alice, bob, { fungible: [{ token: c.usdc, amount: price }] }),
    ]);
  }

  // 4. 10^18 + 1 wei over 3 tokens: 333333333333333333 each and 2 wei left, which go to the
  //    first two (equal remainders, ties to the earlier).
  {
    const price = ETHER + 1n;
    const items = [1n, 2n, 3n].map((tokenId) => ({ nft: c.apes, tokenId }));
    const id = await list(alice, items, ZERO_ADDRESS, price);
    const r = await send(c.escrow, "buy", [id], carol, price);
    const by = "ATTRIBUTED_BY_SAME_CONTRACT_AVERAGE";
    scenario("4 bundle of three tokens of one collection", r, [
      sale(c.apes, 1n, alice, carol, { native: 333_333_333_333_333_334n }, by),
      sale(c.apes, 2n, alice, carol, { native: 333_333_333_333_333_334n }, by),
      sale(c.apes, 3n, alice, carol, { native: 333_333_333_333_333_333n }, by),
    ]);
  }

  // 5. 0.7 ETH over 3 tokens of two collections: 233333333333333333 each, 1 wei to the first.
  {
    const price = eth(700n);
    const items = [
      { nft: c.apes, tokenId: 5n },
      { nft: c.cats, tokenId: 1n },
      { nft: c.cats, tokenId: 2n },
    ];
    const id = await list(alice, items, ZERO_ADDRESS, price);
    const r = await send(c.escrow, "buy", [id], dave, price);
    const by = "ATTRIBUTED_BY_MULTI_CONTRACT_AVERAGE";
    scenario("5 bundle across two collections", r, [
      sale(c.apes, 5n, alice, dave, { native: 233_333_333_333_333_334n }, by),
      sale(c.cats, 1n, alice, dave, { native: 233_333_333_333_333_333n }, by),
      sale(c.cats, 2n, alice, dave, { native: 233_333_333_333_333_333n }, by),
    ]);
  }

  // 6. Three sellers, three prices, 1.5 ETH sent for 1.35 ETH of listings and 0.15 ETH refunded.
  {
    const prices = [eth(300n), eth(450n), eth(600n)] as const;
    const ids = [
      await list(alice, [{ nft: c.apes, tokenId: 10n }], ZERO_ADDRESS, prices[0]),
      await list(bob, [{ nft: c.apes, tokenId: 11n }], ZERO_ADDRESS, prices[1]),
      await list(carol, [{ nft: c.apes, tokenId: 12n }], ZERO_ADDRESS, prices[2]),
    ];
    const r = await send(c.aggregator, "sweep", [c.escrow, ids], dave, eth(1500n));
    const by = "ATTRIBUTED_BY_SELLER_PROCEEDS";
    scenario("6 sweep of three sellers through an aggregator", r, [
      sale(c.apes, 10n, alice, dave, { native: prices[0] }, by),
      sale(c.apes, 11n, bob, dave, { native: prices[1] }, by),
      sale(c.apes, 12n, carol, dave, { native: prices[2] }, by),
    ]);
  }

  // 6b. The same sweep across collections whose creators take different royalties (5% and 10%):
  //     what each seller receives is no longer the same fraction of its price.
  {
    const prices = [eth(300n), eth(450n)] as const;
    const ids = [
      await list(alice, [{ nft: c.cats, tokenId: 3n }], ZERO_ADDRESS, prices[0]),
      await list(carol, [{ nft: c.apes, tokenId: 28n }], ZERO_ADDRESS, prices[1]),
    ];
    const r = await send(c.aggregator, "sweep", [c.escrow, ids], erin, prices[0] + prices[1]);
    const by = "ATTRIBUTED_BY_SELLER_PROCEEDS";
    scenario("6b sweep across collections with different royalties", r, [
      sale(c.cats, 3n, alice, erin, { native: prices[0] }, by),
      sale(c.apes, 28n, carol, erin, { native: prices[1] }, by),
    ]);
  }

  // 7. 1 ETH sent for a 0.8 ETH listing; the market sends 0.2 ETH back in the same transaction.
  {
    const price = eth(800n);
    const id = await list(carol, [{ nft: c.apes, tokenId: 22n }], ZERO_ADDRESS, price);
    const r = await send(c.escrow, "buy", [id], dave, eth(1000n));
    scenario("7 overpayment refunded", r, [sale(c.apes, 22n, carol, dave, { native: price })]);
  }

  // 8. The bot buys alice's 1 ETH listing and fills erin's 1.2 WETH bid with it: alice sold to erin.
  {
    const listed = eth(1000n);
    const offered = eth(1200n);
    const id = await list(alice, [{ nft: c.apes, tokenId: 23n }], ZERO_ADDRESS, listed);
    const b = await bid(erin, c.weth, c.apes, 23n, offered);
    const r = await send(c.relay, "arbitrage", [c.escrow, id, c.bids, b, c.apes, 23n], bot, listed);
    scenario("8 NFT through an arbitrage relay", r, [
      sale(c.apes, 23n, alice, erin, { fungible: [{ token: c.weth, amount: offered }] }),
    ]);
  }

  // 9. Lent from bob to carol and back within the call.
  {
    const r = await send(c.lender, "lend", [c.apes, 24n, carol], carol);
    scenario("9 NFT lent and returned in one transaction", r, [
      {
        kind: "return",
        contract: c.apes,
        tokenId: 24n,
        seller: bob,
        buyer: bob,
        quantity: 1n,
        native: 0n,
        fungible: [],
        attributedBy: "ATTRIBUTED_BY_NO_PAYMENTS",
      },
    ]);
  }

  // 9 (wash). alice sells to bob, bob sells straight back: two sales, flagged later by the store.
  {
    const price = eth(500n);
    const first = await list(alice, [{ nft: c.apes, tokenId: 25n }], ZERO_ADDRESS, price);
    const there = await send(c.escrow, "buy", [first], bob, price);
    scenario("9 wash pair, first leg", there, [sale(c.apes, 25n, alice, bob, { native: price })]);
    const second = await list(bob, [{ nft: c.apes, tokenId: 25n }], ZERO_ADDRESS, price);
    const back = await send(c.escrow, "buy", [second], alice, price);
    scenario("9 wash pair, second leg", back, [sale(c.apes, 25n, bob, alice, { native: price })]);
  }

  // 10. Five units of one ERC-1155 id for 0.25 ETH (the collection has no royalty set).
  {
    const price = eth(250n);
    const id = await list(alice, [{ nft: c.items, tokenId: 7n, amount: 5n }], ZERO_ADDRESS, price);
    const r = await send(c.escrow, "buy", [id], bob, price);
    scenario("10 five units of one ERC-1155 id", r, [
      sale(c.items, 7n, alice, bob, { native: price }, "ATTRIBUTED_BY_SINGLE_TRANSFER", 5n),
    ]);
  }

  // 11. Token 1 minted for its fixed price, paid to the collection.
  {
    const r = await send(c.minted, "mint", [], erin, MINT_PRICE);
    scenario("11 paid mint", r, [
      {
        kind: "mint",
        contract: c.minted,
        tokenId: 1n,
        seller: ZERO_ADDRESS,
        buyer: erin,
        quantity: 1n,
        native: MINT_PRICE,
        fungible: [],
        attributedBy: "ATTRIBUTED_BY_SINGLE_TRANSFER",
      },
    ]);
  }

  // 12. Nothing paid, or nothing happened.
  {
    const gift = await send(c.apes, "transferFrom", [dave, erin, 26n], dave);
    scenario("12 gift", gift, []);
    await send(c.swap, "offer", [c.apes, 27n, c.cats, 5n], alice);
    const swapped = await send(c.swap, "accept", [0n], bob);
    scenario("12 NFT-for-NFT swap", swapped, []);
    const price = eth(1000n);
    // dave gave token 26 away just above: the listing is stale and the purchase reverts once the
    // market tries to move the token, after the payment was taken.
    const id = await list(dave, [{ nft: c.apes, tokenId: 26n }], ZERO_ADDRESS, price);
    const reverted = await sendReverting(chain, c.escrow, "EscrowMarket", "buy", [id], bob, price);
    scenarios.push({
      name: "12 reverted purchase",
      txHash: hashOf(reverted),
      reverted: true,
      expected: [],
      bids: [],
    });
  }

  // 13. CryptoPunks credits sellers for a later withdrawal, so no ETH reaches them here.
  {
    const price = eth(3000n);
    await send(c.punks, "offerPunkForSale", [0n, price], alice);
    const bought = await send(c.punks, "buyPunk", [0n], carol, price);
    scenario("13 buyPunk", bought, [
      sale(c.punks, 0n, alice, carol, { native: price }, "ATTRIBUTED_BY_MARKET_EVENT"),
    ]);
    const offered = eth(2500n);
    const entered = await send(c.punks, "enterBidForPunk", [1n], dave, offered);
    const bids = punkBidsOf(entered, c.punks);
    const accepted = await send(c.punks, "acceptBidForPunk", [1n, 0n], bob);
    scenario(
      "13 acceptBidForPunk",
      accepted,
      [sale(c.punks, 1n, bob, dave, { native: offered }, "ATTRIBUTED_BY_MARKET_EVENT")],
      { bids },
    );
  }

  // 14. A bid in the pool token, worth its ETH one for one.
  {
    const price = eth(1100n);
    const b = await bid(dave, c.pool, c.apes, 29n, price);
    const r = await send(c.bids, "acceptBid", [b], bob);
    scenario("14 bid paid in a pegged pool token", r, [
      sale(c.apes, 29n, bob, dave, { fungible: [{ token: c.pool, amount: price }] }),
    ]);
  }

  // Smart accounts, routers and loans: each buys one ETH listing of alice's, and the price is what
  // reached alice, the market's treasury and the creator, whatever else the call paid.
  const pay = async (from: Address, to: Address, value: bigint) =>
    waitForReceipt(
      chain,
      await chain.walletClient.sendTransaction({ account: from, chain: null, to, value }),
    );
  const buyCall = (listingId: bigint, value: bigint) => ({
    target: c.escrow,
    value,
    data: encodeFunctionData({
      abi: loadArtifact("EscrowMarket").abi,
      functionName: "buy",
      args: [listingId],
    }),
  });
  const read = async (address: Address, name: ContractName, functionName: string, args: unknown[]) =>
    chain.publicClient.readContract({ address, abi: loadArtifact(name).abi, functionName, args });
  for (const id of [30n, 31n, 32n, 33n, 34n]) await send(c.apes, "mint", [alice, id], deployer);
  // A USDC/WETH pair at 3,000 USDC per WETH, and 10,000 USDC for dave to buy with.
  await send(c.factory, "createPair", [c.usdc, c.weth], deployer);
  const pair = (
    (await read(c.factory, "UniswapV2Factory", "getPair", [c.usdc, c.weth])) as Address
  ).toLowerCase() as Address;
  await send(c.usdc, "mint", [pair, 300_000_000_000n], deployer);
  await send(c.weth, "deposit", [], deployer, eth(100_000n));
  await send(c.weth, "transfer", [pair, eth(100_000n)], deployer);
  await sendContractTx(chain, {
    address: pair,
    abi: loadArtifact("UniswapV2Pair").abi,
    functionName: "mint",
    args: [deployer],
    from: deployer,
  });
  await send(c.usdc, "mint", [dave, 10_000_000_000n], deployer);
  await send(c.usdc, "approve", [c.router, 2n ** 256n - 1n], dave);
  await send(c.usdc, "approve", [c.anyToken, 2n ** 256n - 1n], dave);

  // 15. erin's ERC-4337 SimpleAccount, through EntryPoint v0.7: it prefunds its gas in
  //     validation, buys a 1.2 ETH listing and sends 50 ETH elsewhere in one executeBatch; the
  //     entry point pays the bundler for the gas used.
  {
    const price = eth(1200n);
    await send(c.accountFactory, "createAccount", [erin, 0n], erin);
    c.account = (
      (await read(c.accountFactory, "SimpleAccountFactoryV07", "getAddress", [erin, 0n])) as Address
    ).toLowerCase() as Address;
    await pay(erin, c.account, eth(100_000n));
    const id = await list(alice, [{ nft: c.apes, tokenId: 30n }], ZERO_ADDRESS, price);
    const buy = buyCall(id, price);
    const op = {
      sender: c.account,
      nonce: 0n,
      initCode: "0x" as Hex,
      callData: encodeFunctionData({
        abi: SIMPLE_ACCOUNT_ABI,
        functionName: "executeBatch",
        args: [
          [buy.target, ELSEWHERE],
          [buy.value, eth(50_000n)],
          [buy.data, "0x"],
        ],
      }),
      accountGasLimits: twoUint128(USER_OP_GAS.verification, USER_OP_GAS.call),
      preVerificationGas: USER_OP_GAS.preVerification,
      gasFees: twoUint128(USER_OP_GAS.maxPriorityFeePerGas, USER_OP_GAS.maxFeePerGas),
      paymasterAndData: "0x" as Hex,
      signature: "0x" as Hex,
    };
    const hash = (await read(c.entryPoint, "EntryPointV07", "getUserOpHash", [op])) as Hex;
    op.signature = await chain.walletClient.signMessage({ account: erin, message: { raw: hash } });
    const r = await send(c.entryPoint, "handleOps", [[op], bot], bot);
    scenario("15 ERC-4337 account buys and sends money elsewhere", r, [
      sale(c.apes, 30n, alice, c.account, { native: price }),
    ]);
  }

  // 16. dave's 4,000 USDC go to the pair, which pays the router WETH; the router unwraps it, buys
  //     a 1.2 ETH listing, hands the NFT on and sends dave the ETH left.
  {
    const price = eth(1200n);
    const id = await list(alice, [{ nft: c.apes, tokenId: 31n }], ZERO_ADDRESS, price);
    const r = await send(
      c.router,
      "swapAndBuy",
      [pair, c.usdc, 4_000_000_000n, c.weth, c.escrow, id, c.apes, 31n],
      dave,
    );
    scenario("16 swap and buy through a router", r, [sale(c.apes, 31n, alice, dave, { native: price })]);
  }

  // 17. carol's Safe runs a MultiSend: 50 ETH elsewhere, a 0.9 ETH listing, 3 ETH to bob.
  {
    const price = eth(900n);
    const setup = encodeFunctionData({
      abi: loadArtifact("SafeV150").abi,
      functionName: "setup",
      args: [[carol], 1n, ZERO_ADDRESS, "0x", ZERO_ADDRESS, ZERO_ADDRESS, 0n, ZERO_ADDRESS],
    });
    const created = await send(c.safeFactory, "createProxyWithNonce", [c.safeSingleton, setup, 0n], carol);
    c.safe = proxyCreated(created, c.safeFactory);
    await pay(carol, c.safe, eth(100_000n));
    const id = await list(alice, [{ nft: c.apes, tokenId: 32n }], ZERO_ADDRESS, price);
    const calls = [
      { target: ELSEWHERE, value: eth(50_000n), data: "0x" as Hex },
      buyCall(id, price),
      { target: bob, value: eth(3000n), data: "0x" as Hex },
    ];
    const multiSend = multiSendOf(calls);
    const signature = ownerSignature(carol);
    const r = await sendContractTx(chain, {
      address: c.safe,
      abi: loadArtifact("SafeV150").abi,
      functionName: "execTransaction",
      args: [c.multiSend, 0n, multiSend, 1, 0n, 0n, 0n, ZERO_ADDRESS, ZERO_ADDRESS, signature],
      from: carol,
    });
    scenario("17 multisend buys one NFT and sends money elsewhere", r, [
      sale(c.apes, 32n, alice, c.safe, { native: price }),
    ]);
  }

  // 18. bob borrows 8 of a 10 ETH listing from erin's WETH and pays 2; the desk keeps the NFT.
  {
    const price = eth(10_000n);
    const loan = eth(8000n);
    await send(c.weth, "deposit", [], erin, loan);
    await send(c.weth, "approve", [c.loans, loan], erin);
    const id = await list(alice, [{ nft: c.apes, tokenId: 33n }], ZERO_ADDRESS, price);
    const r = await send(c.loans, "buyToBorrow", [c.escrow, id, c.weth, erin, loan], bob, price - loan);
    scenario("18 buy now, pay later: a lender pays most of the price", r, [
      sale(c.apes, 33n, alice, c.loans, { native: price }, "ATTRIBUTED_BY_RECIPIENT_NO_PAYMENT"),
    ]);
  }

  // 19. dave pays an aggregator 4,000 USDC; it keeps 1% and swaps the rest, buys a 1.2 ETH
  //     listing, hands the NFT on and sends dave the ETH left.
  {
    const price = eth(1200n);
    const id = await list(alice, [{ nft: c.apes, tokenId: 34n }], ZERO_ADDRESS, price);
    const r = await send(
      c.anyToken,
      "buyWithToken",
      [pair, c.usdc, 4_000_000_000n, c.weth, c.escrow, id, c.apes, 34n],
      dave,
    );
    scenario("19 bought with any token through an aggregator", r, [
      sale(c.apes, 34n, alice, dave, { native: price }),
    ]);
  }

  // 20. Paid in a token no pool prices: a sale without a price, counted apart from every price.
  {
    const price = 5n * 10n ** 21n;
    const id = await list(alice, [{ nft: c.apes, tokenId: 40n }], c.game, price);
    const r = await send(c.escrow, "buy", [id], bob);
    scenario("20 sale paid in a token without a rate", r, [
      sale(c.apes, 40n, alice, bob, { fungible: [{ token: c.game, amount: price }] }),
    ]);
  }

  // 21 (wash). A token rotated through three wallets and back to the first within minutes: the
  //    leg that closes the cycle is flagged.
  {
    const price = eth(900n);
    const legs = [
      [alice, bob, "first"],
      [bob, carol, "second"],
      [carol, alice, "third"],
    ] as const;
    for (const [seller, buyer, leg] of legs) {
      const id = await list(seller, [{ nft: c.apes, tokenId: 41n }], ZERO_ADDRESS, price);
      const r = await send(c.escrow, "buy", [id], buyer, price);
      scenario(`21 rotation through three wallets, ${leg} leg`, r, [
        sale(c.apes, 41n, seller, buyer, { native: price }),
      ]);
    }
  }

  // 22-24 (wash). Funding shortly before a sale, in transactions that move no NFT. Fresh accounts,
  //    given a balance without a transfer, so that no earlier case's money ties them together.
  {
    const fresh = (n: number) => `0x${(0xf0d0 + n).toString(16).padStart(40, "0")}` as Address;
    const accounts = Array.from({ length: 22 }, (_, i) => fresh(i));
    await fundAndUnlock(chain, accounts, eth(1_000_000n));
    const pay = async (from: Address, to: Address, value: bigint) =>
      waitForReceipt(
        chain,
        await chain.walletClient.sendTransaction({ account: from, chain: null, to, value }),
      );
    const price = eth(700n);
    const trade = async (name: string, tokenId: bigint, seller: Address, buyer: Address) => {
      await send(c.apes, "mint", [seller, tokenId], deployer);
      await send(c.apes, "setApprovalForAll", [c.escrow, true], seller);
      const id = await list(seller, [{ nft: c.apes, tokenId }], ZERO_ADDRESS, price);
      const r = await send(c.escrow, "buy", [id], buyer, price);
      scenario(name, r, [sale(c.apes, tokenId, seller, buyer, { native: price })]);
    };
    const [funder, s22, b22, s23, b23, exchange, ...rest] = accounts as [Address, ...Address[]];
    const customers = rest.slice(0, 10);
    const [f25, s25, b25, f26, b26, owner26] = rest.slice(10) as [
      Address,
      Address,
      Address,
      Address,
      Address,
      Address,
    ];
    // 22. One account sends ETH to the buyer and to the seller in plain transfers, then they trade.
    await pay(funder, b22 as Address, eth(800n));
    await pay(funder, s22 as Address, eth(10n));
    await trade(
      "22 buyer and seller funded by one account shortly before",
      60n,
      s22 as Address,
      b22 as Address,
    );
    // 23. The seller sends the buyer WETH, then sells to it.
    await send(c.weth, "deposit", [], s23 as Address, eth(800n));
    await send(c.weth, "transfer", [b23, eth(800n)], s23 as Address);
    await trade("23 the seller sends the buyer WETH before the sale", 61n, s23 as Address, b23 as Address);
    // 24. An exchange's wallet pays out to twelve accounts; two of its customers then trade.
    const [s24, b24] = customers as [Address, Address];
    const paidOut = [
      ...customers,
      ...["0xe1", "0xe2"].map((t) => `0x${t.slice(2).padStart(40, "0")}` as Address),
    ];
    for (const customer of paidOut) await pay(exchange as Address, customer, eth(5n));
    await trade("24 an exchange pays out to twelve accounts, two of which trade", 62n, s24, b24);
    // The seller deposits its proceeds back at the exchange that paid the buyer out: not a return.
    await pay(s24, exchange as Address, price);

    // 25. An account funds the buyer; after the sale the seller hands the price back to that account.
    await pay(f25, b25, eth(800n));
    await trade("25 the seller hands the proceeds back to the buyer's funder", 63n, s25, b25);
    await pay(s25, f25, price);

    // 26. An account funds the buyer with WETH; the seller's Safe sells through a deal desk for
    //     WETH and forwards the WETH to that account in the same MultiSend: the review's shape of a
    //     self-funded trade whose money goes round again.
    {
      const wethPrice = eth(500_000n);
      await send(c.weth, "deposit", [], f26, wethPrice);
      await send(c.weth, "transfer", [b26, wethPrice], f26);
      await send(c.weth, "approve", [c.desk, wethPrice], b26);
      const setup = encodeFunctionData({
        abi: loadArtifact("SafeV150").abi,
        functionName: "setup",
        args: [[owner26], 1n, ZERO_ADDRESS, "0x", ZERO_ADDRESS, ZERO_ADDRESS, 0n, ZERO_ADDRESS],
      });
      const created = await send(
        c.safeFactory,
        "createProxyWithNonce",
        [c.safeSingleton, setup, 26n],
        owner26,
      );
      c.sellerSafe = proxyCreated(created, c.safeFactory);
      await send(c.apes, "mint", [c.sellerSafe, 64n], deployer);
      const call = (target: Address, name: ContractName, functionName: string, args: unknown[]) => ({
        target,
        value: 0n,
        data: encodeFunctionData({ abi: loadArtifact(name).abi, functionName, args }),
      });
      const calls = [
        call(c.apes, "TestERC721", "setApprovalForAll", [c.desk, true]),
        call(c.desk, "DealDesk", "settle", [
          [
            {
              nft: c.apes,
              tokenId: 64n,
              seller: c.sellerSafe,
              buyer: b26,
              currency: c.weth,
              price: wethPrice,
            },
          ],
        ]),
        call(c.weth, "WETH9", "transfer", [f26, wethPrice]),
      ];
      const multiSend = multiSendOf(calls);
      const r = await sendContractTx(chain, {
        address: c.sellerSafe,
        abi: loadArtifact("SafeV150").abi,
        functionName: "execTransaction",
        args: [
          c.multiSend,
          0n,
          multiSend,
          1,
          0n,
          0n,
          0n,
          ZERO_ADDRESS,
          ZERO_ADDRESS,
          ownerSignature(owner26),
        ],
        from: owner26,
      });
      scenario(
        "26 a seller's Safe forwards the proceeds to the buyer's funder in the sale's transaction",
        r,
        [sale(c.apes, 64n, c.sellerSafe, b26, { fungible: [{ token: c.weth, amount: wethPrice }] })],
      );
    }

    // 27. A collector buys back, 31 days later, the token it sold in case 25: no cycle any more, and
    //     the funding and the proceeds handed back are a month old.
    await chain.testClient.increaseTime({ seconds: 31 * 86_400 });
    await chain.testClient.mine({ blocks: 1 });
    await send(c.apes, "setApprovalForAll", [c.escrow, true], b25);
    {
      const id = await list(b25, [{ nft: c.apes, tokenId: 63n }], ZERO_ADDRESS, price);
      const r = await send(c.escrow, "buy", [id], s25, price);
      scenario("27 a collector buys back, a month later, a token it sold", r, [
        sale(c.apes, 63n, b25, s25, { native: price }),
      ]);
    }
  }

  const types = new Map<Address, ReadonlySet<ContractType>>([
    [c.apes, new Set(["TYPE_ERC721"])],
    [c.cats, new Set(["TYPE_ERC721"])],
    [c.minted, new Set(["TYPE_ERC721"])],
    [c.items, new Set(["TYPE_ERC1155"])],
    [c.punks, new Set(["TYPE_CRYPTOPUNKS"])],
    [c.weth, new Set(["TYPE_ERC20"])],
    [c.usdc, new Set(["TYPE_ERC20"])],
    [c.pool, new Set(["TYPE_ERC20"])],
    [c.game, new Set(["TYPE_ERC20"])],
    [pair, new Set(["TYPE_ERC20"])],
  ]);
  return { scenarios, contracts: c, typesOf: (address) => types.get(address) };
}

/** The ERC-4337 account's batch call, as SimpleAccount v0.7 declares it. */
const SIMPLE_ACCOUNT_ABI = parseAbi(["function executeBatch(address[] dest, uint256[] value, bytes[] func)"]);

/** A user operation's gas: its limits, and what its account prefunds at most per unit. */
const USER_OP_GAS = {
  verification: 300_000n,
  call: 500_000n,
  preVerification: 60_000n,
  maxPriorityFeePerGas: 10n ** 9n,
  maxFeePerGas: 5n * 10n ** 9n,
} as const;

/** What EntryPoint v0.7 asks the account to prefund: every gas limit at the highest fee. */
export const USER_OP_PREFUND =
  (USER_OP_GAS.verification + USER_OP_GAS.call + USER_OP_GAS.preVerification) * USER_OP_GAS.maxFeePerGas;

/** Two uint128 in one word, high then low, as v0.7's packed user operation holds gas figures. */
function twoUint128(high: bigint, low: bigint): Hex {
  return `0x${high.toString(16).padStart(32, "0")}${low.toString(16).padStart(32, "0")}`;
}

/** MultiSend v1.5.0's call data for plain calls, one after another. */
function multiSendOf(calls: readonly { target: Address; value: bigint; data: Hex }[]): Hex {
  return encodeFunctionData({
    abi: loadArtifact("MultiSendV150").abi,
    functionName: "multiSend",
    args: [
      concat(
        calls.map((call) =>
          encodePacked(
            ["uint8", "address", "uint256", "uint256", "bytes"],
            [0, call.target, call.value, BigInt(size(call.data)), call.data],
          ),
        ),
      ),
    ],
  });
}

/** A Safe's one owner (of a threshold of one) sending the transaction itself: its pre-validated signature. */
function ownerSignature(owner: Address): Hex {
  return concat([pad(owner), pad("0x00"), "0x01"]);
}

/** The Safe a factory's `ProxyCreation` says it made. */
function proxyCreated(receipt: TransactionReceipt, factory: Address): Address {
  const abi = loadArtifact("SafeProxyFactoryV150").abi;
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== factory) continue;
    const event = decodeEventLog({ abi, data: log.data, topics: log.topics });
    if (event.eventName === "ProxyCreation") {
      return (event.args as unknown as { proxy: Address }).proxy.toLowerCase() as Address;
    }
  }
  throw new Error(`no ProxyCreation in ${receipt.transactionHash}`);
}

/** Sends a transaction that is expected to revert: a fixed gas limit, since estimation would fail first. */
async function sendReverting(
  chain: DevChain,
  to: Address,
  name: ContractName,
  functionName: string,
  args: unknown[],
  from: Address,
  value: bigint,
): Promise<TransactionReceipt> {
  const data = encodeFunctionData({ abi: loadArtifact(name).abi, functionName, args });
  const hash = await chain.walletClient.sendTransaction({
    account: from,
    chain: null,
    to,
    data,
    value,
    gas: 500_000n,
  });
  const receipt = await waitForReceipt(chain, hash);
  if (receipt.status !== "reverted") throw new Error(`${functionName} in ${hash} was expected to revert`);
  return receipt;
}

/** The bids a transaction entered, from its `PunkBidEntered` logs. */
function punkBidsOf(receipt: TransactionReceipt, punks: Address): PunkBid[] {
  const abi = loadArtifact("CryptoPunksMarket").abi;
  const bids: PunkBid[] = [];
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== punks) continue;
    const event = decodeEventLog({ abi, data: log.data, topics: log.topics });
    if (event.eventName !== "PunkBidEntered") continue;
    const args = event.args as unknown as { punkIndex: bigint; value: bigint; fromAddress: Address };
    bids.push({
      contract: punks,
      punkIndex: args.punkIndex,
      bidder: args.fromAddress.toLowerCase() as Address,
      value: args.value,
    });
  }
  return bids;
}

/** Looks a bid up among the ones known, as the store will among the bids it has seen. */
export function bidLookup(bids: readonly PunkBid[]): BidLookup {
  return (contract, punkIndex, bidder) =>
    bids.find((b) => b.contract === contract && b.punkIndex === punkIndex && b.bidder === bidder);
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/**
 * What attribution reads about a transaction, gathered from the node the way the indexer gathers
 * it: the receipt's logs through the log parser and the transfer decoder, the call trace through
 * the trace parser, the sender and value from the transaction itself. Undefined when the
 * transaction moved no NFT. Only CryptoPunks' `PunkBought` is taken as a market event.
 */
export async function saleTransactionOf(
  chain: DevChain,
  txHash: Hex,
  typesOf: TypesOf,
  punks?: Address,
): Promise<SaleTransaction | undefined> {
  const receipt = (await rpc(chain.rpcUrl, "eth_getTransactionReceipt", [txHash])) as {
    blockNumber: Hex;
    logs: { topics: Hex[] }[];
  };
  const blockNumber = Number(receipt.blockNumber);
  const topic0 = new Set(receipt.logs.map((l) => l.topics[0] as Hex));
  const logs = parseLogs(receipt.logs, blockNumber, blockNumber, topic0);
  const decoded = decodeLogs(logs, typesOf);
  if (decoded.malformed.length > 0 || decoded.unclassified.length > 0) {
    throw new Error(`transaction ${txHash} has logs the decoder could not read`);
  }
  const traces = await rpc(chain.rpcUrl, "trace_transaction", [txHash]);
  const { native } = parseParityBlockTraceData(traces, blockNumber);
  const raw = (await rpc(chain.rpcUrl, "eth_getTransactionByHash", [txHash])) as {
    from: Address;
    to: Address | null;
    value: Hex;
  };
  const info: TransactionInfo = {
    from: raw.from.toLowerCase() as Address,
    to: raw.to === null ? null : (raw.to.toLowerCase() as Address),
    value: BigInt(raw.value),
  };

  const markets: (MarketEvent & { txHash: Hex })[] = [];
  if (punks) {
    const abi = loadArtifact("CryptoPunksMarket").abi;
    for (const log of logs) {
      if (log.address !== punks) continue;
      const event = decodeEventLog({
        abi,
        data: log.data,
        topics: log.topics as [Hex, ...Hex[]],
      });
      if (event.eventName !== "PunkBought") continue;
      const args = event.args as unknown as {
        punkIndex: bigint;
        value: bigint;
        fromAddress: Address;
        toAddress: Address;
      };
      markets.push({
        market: "cryptopunks",
        contract: punks,
        logIndex: log.logIndex,
        punk: {
          index: args.punkIndex,
          value: args.value,
          from: args.fromAddress.toLowerCase() as Address,
          to: args.toAddress.toLowerCase() as Address,
        },
        txHash: log.transactionHash,
      });
    }
  }

  const [tx] = saleTransactions({
    nft: decoded.nft,
    fungible: decoded.fungible,
    native,
    markets,
    transactions: new Map([[txHash, info]]),
  });
  return tx;
}
