/**
 * The ERC-721 collections' own activity: mints one at a time and in batches in the open-mint
 * collections, ordinary mints in the ERC-2309 one, and transfers, burns and sends to 0x…dEaD in
 * all of them.
 */
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, DEAD_ADDRESS, erc721MintBatchGas, GAS, type MintableErc721Key } from "../contracts.ts";
import type { Erc721Model } from "../world.ts";
import { type PlanContext, tokenKey } from "./context.ts";

/** Relative popularity of the open-mint collections. */
const MINTABLE_WEIGHTS: Record<MintableErc721Key, number> = { erc721: 5, erc721Create2: 3, erc721Create: 2 };

/** Any ERC-721 collection with movable tokens, the ERC-2309 one included. */
export function anyCollection({ world, prng }: PlanContext): Erc721Model | undefined {
  const models = [...world.erc721.values()].filter((m) => m.held.size > 0);
  if (models.length === 0) return undefined;
  return models[prng.weightedIndex(models.map((m) => (m.key === "erc721Consecutive" ? 3 : 5)))];
}

/** A token of `c` held by a demo account, free in this block (and passing `extra`); marks it touched. */
export function heldToken(
  { prng }: PlanContext,
  c: Erc721Model,
  touched: Set<string>,
  extra?: (id: bigint) => boolean,
): { id: bigint; owner: Address } | undefined {
  const id = c.held.pick(prng, (i) => !touched.has(tokenKey(c.contract, i)) && (extra?.(i) ?? true));
  if (id === undefined) return undefined;
  touched.add(tokenKey(c.contract, id));
  return { id, owner: c.owners.get(id) as Address };
}

export function createErc721Planner(ctx: PlanContext) {
  const { world, prng, counts } = ctx;

  function mintableCollection(): Erc721Model | undefined {
    const models = (Object.keys(MINTABLE_WEIGHTS) as MintableErc721Key[])
      .map((key) => world.erc721.get(key))
      .filter((m): m is Erc721Model => m !== undefined);
    if (models.length === 0) return undefined;
    return models[prng.weightedIndex(models.map((m) => MINTABLE_WEIGHTS[m.key as MintableErc721Key]))];
  }

  /** A free held token of any collection, weighted as `anyCollection` weighs them. */
  function anyHeldToken(touched: Set<string>): { c: Erc721Model; id: bigint; owner: Address } | undefined {
    const c = anyCollection(ctx);
    const token = c && heldToken(ctx, c, touched);
    return c && token && { c, ...token };
  }

  function mint(touched: Set<string>): TxRequest[] | undefined {
    const c = mintableCollection();
    if (!c) return undefined;
    const to = world.pickAccount(prng);
    const id = c.nextId;
    c.setOwner(id, to, world.accountSet);
    touched.add(tokenKey(c.contract, id));
    counts.erc721Mints++;
    return [callTx(to, c.contract.address, "TestERC721", "mint", [to, id], GAS.erc721Mint)];
  }

  function mintBatch(touched: Set<string>): TxRequest[] | undefined {
    const c = mintableCollection();
    if (!c) return undefined;
    const to = world.pickAccount(prng);
    const count = prng.int(2, 25);
    const first = c.nextId;
    for (let i = 0n; i < BigInt(count); i++) {
      c.setOwner(first + i, to, world.accountSet);
      touched.add(tokenKey(c.contract, first + i));
    }
    counts.erc721BatchMints++;
    counts.erc721BatchMintedTokens += count;
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

  function transfer(touched: Set<string>): TxRequest[] | undefined {
    const token = anyHeldToken(touched);
    if (!token) return undefined;
    const { c } = token;
    const to = world.pickAccount(prng, token.owner);
    c.setOwner(token.id, to, world.accountSet);
    if (c.key === "erc721Consecutive") counts.consecutiveTransfers++;
    else counts.erc721Transfers++;
    const safe = prng.chance(0.3);
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

  function burn(touched: Set<string>): TxRequest[] | undefined {
    const token = anyHeldToken(touched);
    if (!token) return undefined;
    const { c } = token;
    c.setOwner(token.id, undefined, world.accountSet);
    if (c.key === "erc721Consecutive") counts.consecutiveBurns++;
    else counts.erc721Burns++;
    return [
      callTx(token.owner, c.contract.address, c.contract.contractName, "burn", [token.id], GAS.erc721Burn),
    ];
  }

  function sendToDead(touched: Set<string>): TxRequest[] | undefined {
    const token = anyHeldToken(touched);
    if (!token) return undefined;
    const { c } = token;
    c.setOwner(token.id, DEAD_ADDRESS, world.accountSet);
    if (c.key === "erc721Consecutive") counts.consecutiveDeadTransfers++;
    else counts.erc721DeadTransfers++;
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

  /** An ordinary mint in the ERC-2309 collection, after the ranges its constructor minted. */
  function mintConsecutive(touched: Set<string>): TxRequest[] | undefined {
    const c = world.erc721.get("erc721Consecutive");
    if (!c) return undefined;
    const to = world.pickAccount(prng);
    const id = c.nextId;
    c.setOwner(id, to, world.accountSet);
    touched.add(tokenKey(c.contract, id));
    counts.consecutiveMints++;
    return [callTx(to, c.contract.address, "TestERC721Consecutive", "mint", [to, id], GAS.erc721Mint)];
  }

  return { mint, mintBatch, transfer, burn, sendToDead, mintConsecutive };
}
