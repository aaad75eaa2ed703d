/**
 * Plans realistic NFT activity against the World model: every planned transaction is valid at the
 * point the node will execute it, given that transactions run in the order they were planned
 * (anvil orders transactions of equal fees by arrival, and a sender's by nonce). As a margin, no
 * token is touched twice within a block, so tokens never depend on that ordering; only balances of
 * ETH and the currency, which are kept far above what trades move, could.
 */
import { maxUint256 } from "viem";
import { type Address, ZERO_ADDRESS } from "../core/hex.ts";
import type { TxRequest } from "./block-builder.ts";
import {
  callTx,
  DEAD_ADDRESS,
  type DemoContract,
  erc721MintBatchGas,
  erc1155BatchGas,
  GAS,
  type MintableErc721Key,
} from "./contracts.ts";
import type { ActivityCounts } from "./counts.ts";
import type { Prng } from "./prng.ts";
import { TradingPlanner } from "./trading.ts";
import type { Erc721Model, Erc1155Model, World } from "./world.ts";

const ETHER = 10n ** 18n;
const MILLI_ETHER = 10n ** 15n;

/** Relative popularity of the open-mint collections. */
const MINTABLE_WEIGHTS: Record<MintableErc721Key, number> = { erc721: 5, erc721Create2: 3, erc721Create: 2 };

type Action = (touched: Set<string>) => TxRequest[] | undefined;

export class ActivityPlanner {
  private readonly actions: { weight: number; run: Action }[];

  constructor(
    private readonly world: World,
    private readonly prng: Prng,
    readonly counts: ActivityCounts,
  ) {
    this.actions = [
      { weight: 5, run: (t) => this.mintErc721(t) },
      { weight: 3, run: (t) => this.mintBatchErc721(t) },
      { weight: 16, run: (t) => this.transferErc721(t) },
      { weight: 5, run: (t) => this.listErc721(t) },
      { weight: 6, run: (t) => this.buyErc721(t) },
      { weight: 1.5, run: (t) => this.burnErc721(t) },
      { weight: 1, run: (t) => this.deadErc721(t) },
      { weight: 0.7, run: (t) => this.mintConsecutive(t) },
      { weight: 3, run: (t) => this.mintErc1155(t) },
      { weight: 2, run: (t) => this.mintBatchErc1155(t) },
      { weight: 6, run: (t) => this.transferErc1155(t) },
      { weight: 3, run: (t) => this.batchTransferErc1155(t) },
      { weight: 1, run: (t) => this.burnErc1155(t) },
      { weight: 0.5, run: (t) => this.burnBatchErc1155(t) },
      { weight: 0.5, run: (t) => this.deadErc1155(t) },
      { weight: 2.5, run: (t) => this.mintLegacy(t) },
      { weight: 3, run: (t) => this.transferLegacy(t) },
      { weight: 1, run: (t) => this.approveLegacy(t) },
      { weight: 1, run: (t) => this.pullLegacy(t) },
      { weight: 0.5, run: (t) => this.deadLegacy(t) },
      { weight: 2, run: (t) => this.claimPunk(t) },
      { weight: 3, run: (t) => this.transferPunk(t) },
      { weight: 4, run: (t) => this.offerPunk(t) },
      { weight: 0.7, run: (t) => this.cancelPunkOffer(t) },
      { weight: 4, run: (t) => this.buyPunk(t) },
      { weight: 3, run: (t) => this.bidPunk(t) },
      { weight: 3, run: (t) => this.acceptPunkBid(t) },
      { weight: 0.7, run: (t) => this.withdrawPunkBid(t) },
      { weight: 1, run: (t) => this.withdrawPunkProceeds(t) },
      { weight: 4, run: (t) => this.transferErc20(t) },
      ...new TradingPlanner(world, prng, counts).actions(),
    ];
  }

  /**
   * One user action (one to three transactions from the same sender). `touched` holds the assets
   * already used in the block being planned and is updated.
   */
  plan(touched: Set<string>): TxRequest[] {
    const weights = this.actions.map((a) => a.weight);
    for (let attempt = 0; attempt < 40; attempt++) {
      const action = this.actions[this.prng.weightedIndex(weights)];
      const txs = action?.run(touched);
      if (txs && txs.length > 0) return txs;
    }
    // Nothing else applied (an empty world): a mint always does, if any collection exists.
    return this.mintErc721(touched) ?? this.mintLegacy(touched) ?? [];
  }

  // --- ERC-721 -------------------------------------------------------------------------------

  private mintableCollection(): Erc721Model | undefined {
    const models = (Object.keys(MINTABLE_WEIGHTS) as MintableErc721Key[])
      .map((key) => this.world.erc721.get(key))
      .filter((m): m is Erc721Model => m !== undefined);
    if (models.length === 0) return undefined;
    return models[this.prng.weightedIndex(models.map((m) => MINTABLE_WEIGHTS[m.key as MintableErc721Key]))];
  }

  /** Any ERC-721 collection with movable tokens, the ERC-2309 one included. */
  private anyCollection(): Erc721Model | undefined {
    const models = [...this.world.erc721.values()].filter((m) => m.held.size > 0);
    if (models.length === 0) return undefined;
    return models[this.prng.weightedIndex(models.map((m) => (m.key === "erc721Consecutive" ? 3 : 5)))];
  }

  private heldToken(
    c: Erc721Model,
    touched: Set<string>,
    extra?: (id: bigint) => boolean,
  ): { id: bigint; owner: Address } | undefined {
    const id = c.held.pick(this.prng, (i) => !touched.has(key721(c, i)) && (extra?.(i) ?? true));
    if (id === undefined) return undefined;
    touched.add(key721(c, id));
    return { id, owner: c.owners.get(id) as Address };
  }

  private mintErc721(touched: Set<string>): TxRequest[] | undefined {
    const c = this.mintableCollection();
    if (!c) return undefined;
    const to = this.world.pickAccount(this.prng);
    const id = c.nextId;
    c.setOwner(id, to, this.world.accountSet);
    touched.add(key721(c, id));
    this.counts.erc721Mints++;
    return [callTx(to, c.contract.address, "TestERC721", "mint", [to, id], GAS.erc721Mint)];
  }

  private mintBatchErc721(touched: Set<string>): TxRequest[] | undefined {
    const c = this.mintableCollection();
    if (!c) return undefined;
    const to = this.world.pickAccount(this.prng);
    const count = this.prng.int(2, 25);
    const first = c.nextId;
    for (let i = 0n; i < BigInt(count); i++) {
      c.setOwner(first + i, to, this.world.accountSet);
      touched.add(key721(c, first + i));
    }
    this.counts.erc721BatchMints++;
    this.counts.erc721BatchMintedTokens += count;
    return [
      callTx(
        to,
        c.contract.address,
        "TestERC721",
        "mintBatch",
        [to, first, BigInt(count)],
        erc721MintBatchGas(count),
      ),
    ];
  }

  private transferErc721(touched: Set<string>): TxRequest[] | undefined {
    const c = this.anyCollection();
    const token = c && this.heldToken(c, touched);
    if (!c || !token) return undefined;
    const to = this.world.pickAccount(this.prng, token.owner);
    c.setOwner(token.id, to, this.world.accountSet);
    if (c.key === "erc721Consecutive") this.counts.consecutiveTransfers++;
    else this.counts.erc721Transfers++;
    const safe = this.prng.chance(0.3);
    return [
      callTx(
        token.owner,
        c.contract.address,
        c.contract.contractName,
        safe ? "safeTransferFrom" : "transferFrom",
        [token.owner, to, token.id],
        GAS.erc721Transfer,
      ),
    ];
  }

  private burnErc721(touched: Set<string>): TxRequest[] | undefined {
    const c = this.anyCollection();
    const token = c && this.heldToken(c, touched);
    if (!c || !token) return undefined;
    c.setOwner(token.id, undefined, this.world.accountSet);
    if (c.key === "erc721Consecutive") this.counts.consecutiveBurns++;
    else this.counts.erc721Burns++;
    return [
      callTx(token.owner, c.contract.address, c.contract.contractName, "burn", [token.id], GAS.erc721Burn),
    ];
  }

  private deadErc721(touched: Set<string>): TxRequest[] | undefined {
    const c = this.anyCollection();
    const token = c && this.heldToken(c, touched);
    if (!c || !token) return undefined;
    c.setOwner(token.id, DEAD_ADDRESS, this.world.accountSet);
    if (c.key === "erc721Consecutive") this.counts.consecutiveDeadTransfers++;
    else this.counts.erc721DeadTransfers++;
    return [
      callTx(
        token.owner,
        c.contract.address,
        c.contract.contractName,
        "transferFrom",
        [token.owner, DEAD_ADDRESS, token.id],
        GAS.erc721Transfer,
      ),
    ];
  }

  private mintConsecutive(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.erc721.get("erc721Consecutive");
    if (!c) return undefined;
    const to = this.world.pickAccount(this.prng);
    const id = c.nextId;
    c.setOwner(id, to, this.world.accountSet);
    touched.add(key721(c, id));
    this.counts.consecutiveMints++;
    return [callTx(to, c.contract.address, "TestERC721Consecutive", "mint", [to, id], GAS.erc721Mint)];
  }

  private listErc721(touched: Set<string>): TxRequest[] | undefined {
    const market = this.world.contracts.marketplace;
    const c = this.anyCollection();
    const token = c && market && this.heldToken(c, touched, (id) => !c.listings.has(id));
    if (!c || !market || !token) return undefined;
    const txs: TxRequest[] = [];
    if (!c.marketApproved.has(token.owner)) {
      c.marketApproved.add(token.owner);
      this.counts.approvalsForAll++;
      txs.push(
        callTx(
          token.owner,
          c.contract.address,
          c.contract.contractName,
          "setApprovalForAll",
          [market.address, true],
          GAS.approvalForAll,
        ),
      );
    }
    const erc20 = this.world.erc20;
    const inToken = erc20 !== undefined && this.prng.chance(0.4);
    const price = inToken
      ? BigInt(this.prng.logUniform(10, 20_000, 1)) * ETHER
      : BigInt(this.prng.logUniform(5, 20_000, 1)) * MILLI_ETHER;
    const currency = inToken ? erc20.contract.address : null;
    c.listings.set(token.id, { seller: token.owner, currency, price });
    this.counts.erc721Listings++;
    txs.push(
      callTx(
        token.owner,
        market.address,
        "TestMarketplace",
        "list",
        // The marketplace names ETH as the zero address.
        [c.contract.address, token.id, currency ?? ZERO_ADDRESS, price],
        GAS.marketList,
      ),
    );
    return txs;
  }

  private buyErc721(touched: Set<string>): TxRequest[] | undefined {
    const market = this.world.contracts.marketplace;
    const listed = [...this.world.erc721.values()].filter((m) => m.listings.size > 0);
    if (!market || listed.length === 0) return undefined;
    const c = this.prng.pick(listed);
    const candidates = [...c.listings.keys()].filter((id) => !touched.has(key721(c, id)));
    if (candidates.length === 0) return undefined;
    const id = this.prng.pick(candidates);
    const listing = c.listings.get(id);
    if (!listing) return undefined;
    touched.add(key721(c, id));
    const buyer = this.world.pickAccount(this.prng, listing.seller);
    const txs: TxRequest[] = [];
    const erc20 = this.world.erc20;
    if (listing.currency !== null) {
      if (!erc20) return undefined;
      txs.push(...this.ensureErc20(buyer, listing.price, market.address));
      erc20.move(buyer, listing.seller, listing.price);
    }
    c.setOwner(id, buyer, this.world.accountSet);
    this.counts.erc721Sales++;
    txs.push(
      callTx(buyer, market.address, "TestMarketplace", "buy", [c.contract.address, id], GAS.marketBuy, {
        value: listing.currency === null ? listing.price : 0n,
      }),
    );
    return txs;
  }

  // --- ERC-20 --------------------------------------------------------------------------------

  /** Tops up and approves the buyer's currency, in transactions that precede the purchase. */
  private ensureErc20(buyer: Address, amount: bigint, spender: Address): TxRequest[] {
    const erc20 = this.world.erc20;
    if (!erc20) return [];
    const txs: TxRequest[] = [];
    if (erc20.balanceOf(buyer) < amount) {
      const topUp = amount * 10n;
      erc20.move(null, buyer, topUp);
      this.counts.erc20Mints++;
      txs.push(callTx(buyer, erc20.contract.address, "TestERC20", "mint", [buyer, topUp], GAS.erc20Mint));
    }
    if (!erc20.marketApproved.has(buyer)) {
      erc20.marketApproved.add(buyer);
      this.counts.erc20Approvals++;
      txs.push(
        callTx(
          buyer,
          erc20.contract.address,
          "TestERC20",
          "approve",
          [spender, maxUint256],
          GAS.erc20Approve,
        ),
      );
    }
    return txs;
  }

  private transferErc20(_touched: Set<string>): TxRequest[] | undefined {
    const erc20 = this.world.erc20;
    if (!erc20) return undefined;
    const from = this.world.pickAccount(this.prng);
    const balance = erc20.balanceOf(from);
    if (balance < ETHER) return undefined;
    const to = this.world.pickAccount(this.prng, from);
    const amount = BigInt(this.prng.logUniform(1, 5_000, 1)) * ETHER;
    if (amount > balance) return undefined;
    erc20.move(from, to, amount);
    this.counts.erc20Transfers++;
    return [callTx(from, erc20.contract.address, "TestERC20", "transfer", [to, amount], GAS.erc20Transfer)];
  }

  // --- ERC-1155 ------------------------------------------------------------------------------

  private mintErc1155(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.erc1155;
    if (!c) return undefined;
    const id = this.prng.pick(c.tokenIds.filter((i) => !touched.has(key1155(c, i))));
    if (id === undefined) return undefined;
    const to = this.world.pickAccount(this.prng);
    const amount = editionAmount(this.prng, id);
    touched.add(key1155(c, id));
    c.add(id, to, amount, this.world.accountSet);
    this.counts.erc1155Mints++;
    return [callTx(to, c.contract.address, "TestERC1155", "mint", [to, id, amount, "0x"], GAS.erc1155Mint)];
  }

  private mintBatchErc1155(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.erc1155;
    if (!c) return undefined;
    const free = c.tokenIds.filter((i) => !touched.has(key1155(c, i)));
    const ids = sortIds(this.prng.sample(free, this.prng.int(2, 5)));
    if (ids.length < 2) return undefined;
    const to = this.world.pickAccount(this.prng);
    const amounts = ids.map((id) => editionAmount(this.prng, id));
    ids.forEach((id, i) => {
      touched.add(key1155(c, id));
      c.add(id, to, amounts[i] as bigint, this.world.accountSet);
    });
    this.counts.erc1155BatchMints++;
    return [
      callTx(
        to,
        c.contract.address,
        "TestERC1155",
        "mintBatch",
        [to, ids, amounts, "0x"],
        erc1155BatchGas(ids.length),
      ),
    ];
  }

  private heldEdition(c: Erc1155Model, touched: Set<string>): { id: bigint; holder: Address } | undefined {
    const entry = c.held.pick(this.prng, (k) => !touched.has(key1155(c, BigInt(k.split(":")[0] ?? ""))));
    if (entry === undefined) return undefined;
    const [id, holder] = entry.split(":") as [string, Address];
    touched.add(key1155(c, BigInt(id)));
    return { id: BigInt(id), holder };
  }

  private transferErc1155(touched: Set<string>, to?: Address): TxRequest[] | undefined {
    const c = this.world.erc1155;
    const held = c && this.heldEdition(c, touched);
    if (!c || !held) return undefined;
    const balance = c.balanceOf(held.id, held.holder);
    const amount = BigInt(this.prng.int(1, Number(balance > 5n ? 5n : balance)));
    const recipient = to ?? this.world.pickAccount(this.prng, held.holder);
    c.add(held.id, held.holder, -amount, this.world.accountSet);
    c.add(held.id, recipient, amount, this.world.accountSet);
    if (recipient === DEAD_ADDRESS) this.counts.erc1155DeadTransfers++;
    else this.counts.erc1155Transfers++;
    return [
      callTx(
        held.holder,
        c.contract.address,
        "TestERC1155",
        "safeTransferFrom",
        [held.holder, recipient, held.id, amount, "0x"],
        GAS.erc1155Transfer,
      ),
    ];
  }

  private deadErc1155(touched: Set<string>): TxRequest[] | undefined {
    return this.transferErc1155(touched, DEAD_ADDRESS);
  }

  /** Several ids of one holder, none touched yet in this block, with amounts to move. */
  private heldBatch(
    c: Erc1155Model,
    touched: Set<string>,
  ): { holder: Address; ids: bigint[]; amounts: bigint[] } | undefined {
    const first = c.held.pick(this.prng, (k) => !touched.has(key1155(c, BigInt(k.split(":")[0] ?? ""))));
    if (first === undefined) return undefined;
    const holder = first.split(":")[1] as Address;
    const free = c.idsHeldBy(holder).filter((id) => !touched.has(key1155(c, id)));
    const ids = sortIds(this.prng.sample(free, this.prng.int(2, 4)));
    if (ids.length < 2) return undefined;
    const amounts = ids.map((id) => {
      const balance = c.balanceOf(id, holder);
      return BigInt(this.prng.int(1, Number(balance > 3n ? 3n : balance)));
    });
    for (const id of ids) touched.add(key1155(c, id));
    return { holder, ids, amounts };
  }

  private batchTransferErc1155(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.erc1155;
    const batch = c && this.heldBatch(c, touched);
    if (!c || !batch) return undefined;
    const to = this.world.pickAccount(this.prng, batch.holder);
    batch.ids.forEach((id, i) => {
      c.add(id, batch.holder, -(batch.amounts[i] as bigint), this.world.accountSet);
      c.add(id, to, batch.amounts[i] as bigint, this.world.accountSet);
    });
    this.counts.erc1155BatchTransfers++;
    return [
      callTx(
        batch.holder,
        c.contract.address,
        "TestERC1155",
        "safeBatchTransferFrom",
        [batch.holder, to, batch.ids, batch.amounts, "0x"],
        erc1155BatchGas(batch.ids.length),
      ),
    ];
  }

  private burnErc1155(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.erc1155;
    const held = c && this.heldEdition(c, touched);
    if (!c || !held) return undefined;
    const amount = BigInt(this.prng.int(1, Number(c.balanceOf(held.id, held.holder) > 2n ? 2n : 1n)));
    c.add(held.id, held.holder, -amount, this.world.accountSet);
    this.counts.erc1155Burns++;
    return [
      callTx(
        held.holder,
        c.contract.address,
        "TestERC1155",
        "burn",
        [held.holder, held.id, amount],
        GAS.erc1155Burn,
      ),
    ];
  }

  private burnBatchErc1155(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.erc1155;
    const batch = c && this.heldBatch(c, touched);
    if (!c || !batch) return undefined;
    batch.ids.forEach((id, i) => {
      c.add(id, batch.holder, -(batch.amounts[i] as bigint), this.world.accountSet);
    });
    this.counts.erc1155BatchBurns++;
    return [
      callTx(
        batch.holder,
        c.contract.address,
        "TestERC1155",
        "burnBatch",
        [batch.holder, batch.ids, batch.amounts],
        erc1155BatchGas(batch.ids.length),
      ),
    ];
  }

  // --- Legacy (pre-standard) ERC-721 ----------------------------------------------------------

  private mintLegacy(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.legacy;
    if (!c) return undefined;
    const to = this.world.pickAccount(this.prng);
    c.totalSupply += 1n;
    c.setOwner(c.totalSupply, to, this.world.accountSet);
    touched.add(keyContract(c.contract, c.totalSupply));
    this.counts.legacyMints++;
    return [callTx(to, c.contract.address, "LegacyERC721", "mint", [to], GAS.legacyMint)];
  }

  private heldLegacy(touched: Set<string>): { id: bigint; owner: Address } | undefined {
    const c = this.world.legacy;
    if (!c) return undefined;
    const id = c.held.pick(this.prng, (i) => !touched.has(keyContract(c.contract, i)));
    if (id === undefined) return undefined;
    touched.add(keyContract(c.contract, id));
    return { id, owner: c.owners.get(id) as Address };
  }

  private transferLegacy(touched: Set<string>, to?: Address): TxRequest[] | undefined {
    const c = this.world.legacy;
    const token = this.heldLegacy(touched);
    if (!c || !token) return undefined;
    const recipient = to ?? this.world.pickAccount(this.prng, token.owner);
    c.setOwner(token.id, recipient, this.world.accountSet);
    if (recipient === DEAD_ADDRESS) this.counts.legacyDeadTransfers++;
    else this.counts.legacyTransfers++;
    return [
      callTx(
        token.owner,
        c.contract.address,
        "LegacyERC721",
        "transfer",
        [recipient, token.id],
        GAS.legacyTransfer,
      ),
    ];
  }

  private deadLegacy(touched: Set<string>): TxRequest[] | undefined {
    return this.transferLegacy(touched, DEAD_ADDRESS);
  }

  private approveLegacy(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.legacy;
    const token = this.heldLegacy(touched);
    if (!c || !token) return undefined;
    const spender = this.world.pickAccount(this.prng, token.owner);
    c.approvals.set(token.id, spender);
    this.counts.legacyApprovals++;
    return [
      callTx(
        token.owner,
        c.contract.address,
        "LegacyERC721",
        "approve",
        [spender, token.id],
        GAS.legacyApprove,
      ),
    ];
  }

  /** The approved account pulls the token (draft ERC-721: only it may call transferFrom). */
  private pullLegacy(touched: Set<string>): TxRequest[] | undefined {
    const c = this.world.legacy;
    if (!c || c.approvals.size === 0) return undefined;
    const ids = [...c.approvals.keys()].filter((id) => !touched.has(keyContract(c.contract, id)));
    if (ids.length === 0) return undefined;
    const id = this.prng.pick(ids);
    const spender = c.approvals.get(id) as Address;
    const owner = c.owners.get(id) as Address;
    touched.add(keyContract(c.contract, id));
    c.setOwner(id, spender, this.world.accountSet);
    this.counts.legacyApprovedTransfers++;
    return [
      callTx(
        spender,
        c.contract.address,
        "LegacyERC721",
        "transferFrom",
        [owner, spender, id],
        GAS.legacyTransfer,
      ),
    ];
  }

  // --- CryptoPunks ---------------------------------------------------------------------------

  private punk(touched: Set<string>): number | undefined {
    const p = this.world.punks;
    if (!p?.allAssigned) return undefined;
    const index = p.held.pick(this.prng, (i) => !touched.has(keyPunk(i)));
    if (index !== undefined) touched.add(keyPunk(index));
    return index;
  }

  private punkPrice(): bigint {
    return BigInt(this.prng.logUniform(10, 50_000, 1)) * MILLI_ETHER;
  }

  private claimPunk(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    if (!p?.allAssigned) return undefined;
    const index = p.unassigned.pick(this.prng, (i) => !touched.has(keyPunk(i)));
    if (index === undefined) return undefined;
    touched.add(keyPunk(index));
    const claimer = this.world.pickAccount(this.prng);
    p.setOwner(index, claimer, this.world.accountSet);
    this.counts.punksClaimed++;
    return [
      callTx(claimer, p.contract.address, "CryptoPunksMarket", "getPunk", [BigInt(index)], GAS.punksClaim),
    ];
  }

  private transferPunk(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    const index = this.punk(touched);
    if (!p || index === undefined) return undefined;
    const owner = p.owners[index] as Address;
    const to = this.world.pickAccount(this.prng, owner);
    p.setOwner(index, to, this.world.accountSet);
    this.counts.punkTransfers++;
    return [
      callTx(
        owner,
        p.contract.address,
        "CryptoPunksMarket",
        "transferPunk",
        [to, BigInt(index)],
        GAS.punksTransfer,
      ),
    ];
  }

  private offerPunk(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    if (!p) return undefined;
    const index = this.punk(touched);
    if (index === undefined) return undefined;
    const owner = p.owners[index] as Address;
    const minValue = this.punkPrice();
    this.counts.punkOffers++;
    if (this.prng.chance(0.2)) {
      const buyer = this.world.pickAccount(this.prng, owner);
      p.offers.set(index, { seller: owner, minValue, onlySellTo: buyer });
      return [
        callTx(
          owner,
          p.contract.address,
          "CryptoPunksMarket",
          "offerPunkForSaleToAddress",
          [BigInt(index), minValue, buyer],
          GAS.punksOffer,
        ),
      ];
    }
    p.offers.set(index, { seller: owner, minValue, onlySellTo: null });
    return [
      callTx(
        owner,
        p.contract.address,
        "CryptoPunksMarket",
        "offerPunkForSale",
        [BigInt(index), minValue],
        GAS.punksOffer,
      ),
    ];
  }

  private offeredPunk(touched: Set<string>): number | undefined {
    const p = this.world.punks;
    if (!p || p.offers.size === 0) return undefined;
    const candidates = [...p.offers.keys()].filter((i) => !touched.has(keyPunk(i)));
    if (candidates.length === 0) return undefined;
    const index = this.prng.pick(candidates);
    touched.add(keyPunk(index));
    return index;
  }

  private cancelPunkOffer(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    const index = this.offeredPunk(touched);
    if (!p || index === undefined) return undefined;
    const seller = (p.offers.get(index) as { seller: Address }).seller;
    p.offers.delete(index);
    this.counts.punkOffersCancelled++;
    return [
      callTx(
        seller,
        p.contract.address,
        "CryptoPunksMarket",
        "punkNoLongerForSale",
        [BigInt(index)],
        GAS.punksCancel,
      ),
    ];
  }

  private buyPunk(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    const index = this.offeredPunk(touched);
    if (!p || index === undefined) return undefined;
    const offer = p.offers.get(index);
    if (!offer) return undefined;
    const buyer = offer.onlySellTo ?? this.world.pickAccount(this.prng, offer.seller);
    // Buyers sometimes pay over the asking price; the event carries what was paid.
    const value = this.prng.chance(0.2) ? offer.minValue + offer.minValue / 10n : offer.minValue;
    p.credit(offer.seller, value);
    p.setOwner(index, buyer, this.world.accountSet);
    this.counts.punkSales++;
    return [
      callTx(buyer, p.contract.address, "CryptoPunksMarket", "buyPunk", [BigInt(index)], GAS.punksBuy, {
        value,
      }),
    ];
  }

  private bidPunk(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    const index = this.punk(touched);
    if (!p || index === undefined) return undefined;
    const owner = p.owners[index] as Address;
    const bidder = this.world.pickAccount(this.prng, owner);
    const existing = p.bids.get(index);
    let value = this.punkPrice();
    if (existing) {
      if (value <= existing.value) value = existing.value + existing.value / 10n + MILLI_ETHER;
      p.credit(existing.bidder, existing.value);
    }
    p.bids.set(index, { bidder, value });
    this.counts.punkBids++;
    return [
      callTx(
        bidder,
        p.contract.address,
        "CryptoPunksMarket",
        "enterBidForPunk",
        [BigInt(index)],
        GAS.punksBid,
        {
          value,
        },
      ),
    ];
  }

  private biddedPunk(touched: Set<string>): number | undefined {
    const p = this.world.punks;
    if (!p || p.bids.size === 0) return undefined;
    const candidates = [...p.bids.keys()].filter((i) => !touched.has(keyPunk(i)));
    if (candidates.length === 0) return undefined;
    const index = this.prng.pick(candidates);
    touched.add(keyPunk(index));
    return index;
  }

  private acceptPunkBid(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    const index = this.biddedPunk(touched);
    if (!p || index === undefined) return undefined;
    const bid = p.bids.get(index);
    const seller = p.owners[index];
    if (!bid || !seller || !this.world.accountSet.has(seller)) return undefined;
    p.bids.delete(index);
    p.credit(seller, bid.value);
    p.setOwner(index, bid.bidder, this.world.accountSet);
    this.counts.punkBidSales++;
    return [
      callTx(
        seller,
        p.contract.address,
        "CryptoPunksMarket",
        "acceptBidForPunk",
        [BigInt(index), bid.value],
        GAS.punksAcceptBid,
      ),
    ];
  }

  private withdrawPunkBid(touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    const index = this.biddedPunk(touched);
    if (!p || index === undefined) return undefined;
    const bid = p.bids.get(index);
    if (!bid) return undefined;
    p.bids.delete(index);
    this.counts.punkBidsWithdrawn++;
    return [
      callTx(
        bid.bidder,
        p.contract.address,
        "CryptoPunksMarket",
        "withdrawBidForPunk",
        [BigInt(index)],
        GAS.punksWithdrawBid,
      ),
    ];
  }

  private withdrawPunkProceeds(_touched: Set<string>): TxRequest[] | undefined {
    const p = this.world.punks;
    if (!p?.allAssigned) return undefined;
    const owed = [...p.pendingWithdrawals.entries()].filter(([, amount]) => amount > 0n);
    if (owed.length === 0) return undefined;
    const [account] = this.prng.pick(owed);
    p.pendingWithdrawals.set(account, 0n);
    this.counts.punkWithdrawals++;
    return [callTx(account, p.contract.address, "CryptoPunksMarket", "withdraw", [], GAS.punksWithdraw)];
  }
}

function key721(c: Erc721Model, id: bigint): string {
  return keyContract(c.contract, id);
}

function key1155(c: Erc1155Model, id: bigint): string {
  return keyContract(c.contract, id);
}

function keyContract(contract: DemoContract, id: bigint): string {
  return `${contract.address}:${id}`;
}

function keyPunk(index: number): string {
  return `punk:${index}`;
}

function sortIds(ids: bigint[]): bigint[] {
  return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Low ids are scarce editions (ones and twos), higher ones open editions. */
function editionAmount(prng: Prng, id: bigint): bigint {
  return id <= 3n ? 1n : BigInt(prng.int(1, id <= 8n ? 5 : 50));
}
