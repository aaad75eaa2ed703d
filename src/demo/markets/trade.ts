/**
 * What the markets' planners share: the market contracts, a token to sell, the approvals an
 * operator needs, prices in ETH, and the NFT handed to its buyer.
 */
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, type DemoContract, GAS } from "../contracts.ts";
import { type PlanContext, tokenKey } from "../plan/context.ts";
import type { Prng } from "../prng.ts";
import type { Erc721Model, World } from "../world.ts";

const MILLI_ETHER = 10n ** 15n;

/** A market contract the trading needs; deployed with the trading venues, so missing is a bug. */
export function marketContract(
  world: World,
  key: "seaport" | "escrow" | "aggregator" | "dealDesk" | "paidMint",
): DemoContract {
  const contract = world.contracts[key];
  if (!contract) throw new Error(`demo contract ${key} is missing`);
  return contract;
}

/**
 * A token held by a demo account and not touched in this block, of any collection, each as likely;
 * marks it touched.
 */
export function anyHeldToken(
  { world, prng }: PlanContext,
  touched: Set<string>,
): { c: Erc721Model; id: bigint; owner: Address } | undefined {
  const models = [...world.erc721.values()].filter((m) => m.held.size > 0);
  if (models.length === 0) return undefined;
  const c = prng.pick(models);
  const id = c.held.pick(prng, (i) => !touched.has(tokenKey(c.contract, i)));
  if (id === undefined) return undefined;
  touched.add(tokenKey(c.contract, id));
  return { c, id, owner: c.owners.get(id) as Address };
}

/** The approval an operator needs to move `owner`'s tokens of `c`, unless already given. */
export function approveOperator(
  { world, counts }: PlanContext,
  c: Erc721Model,
  owner: Address,
  operator: Address,
): TxRequest[] {
  const trading = world.trading;
  const key = `${operator}:${c.contract.address}:${owner}`;
  if (!trading || trading.approvals.has(key)) return [];
  trading.approvals.add(key);
  counts.approvalsForAll++;
  return [
    callTx(
      owner,
      c.contract.address,
      c.contract.contractName,
      "setApprovalForAll",
      [operator, true],
      GAS.approvalForAll,
    ),
  ];
}

export function ethPrice(prng: Prng): bigint {
  return BigInt(prng.logUniform(5, 20_000, 1)) * MILLI_ETHER;
}

/** Hands the NFT to its buyer in the model, counting the one Transfer log the sale emits. */
export function deliver({ world, counts }: PlanContext, c: Erc721Model, id: bigint, buyer: Address): void {
  c.setOwner(id, buyer, world.accountSet);
  counts.nftTradeTransfers++;
}
