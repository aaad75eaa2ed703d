/**
 * The pools and dollar tokens a chain's exchange rates come from: the configured ones, described
 * by the node once at start (a pool's tokens, each token's decimals, a dollar token's symbol), or
 * the presets of a known chain id, each checked on the node.
 */
import type { ChainClient } from "../chain/rpc-types.ts";
import type { ChainConfig } from "../config/config.ts";
import { UserFacingError } from "../core/errors.ts";
import { type Address, type Hex, wordToAddress } from "../core/hex.ts";
import {
  defaultNativePegged,
  defaultPools,
  defaultUsdTokens,
  type PoolDescription,
  type UsdToken,
} from "../rates/pools.ts";
import { decodeStringResult, decodeUint8Result } from "./classify/calls.ts";

export interface Pricing {
  /** Tokens worth one native coin each; unset: the chain's configured ones, else its presets. */
  nativePegged?: readonly Address[];
  pools: readonly PoolDescription[];
  usdTokens: readonly UsdToken[];
}

/** A preset source the node does not have, left out rather than followed. */
export interface LeftOut {
  kind: "pool" | "usd_token" | "pegged_token";
  address: Address;
  reason: string;
}

export interface ResolvedPricing extends Pricing {
  nativePegged: readonly Address[];
  /** Preset sources missing on the node: each is logged and counted, and none is followed. */
  leftOut: LeftOut[];
}

/** Selectors of the views read: token0(), token1(), decimals(), symbol(). */
const TOKEN0: Hex = "0x0dfe1681";
const TOKEN1: Hex = "0xd21220a7";
const DECIMALS: Hex = "0x313ce567";
const SYMBOL: Hex = "0x95d89b41";

/**
 * The chain's rate sources, chosen by chain id when not configured, each checked on the node. A
 * configured source that is wrong stops the start with the list of what is wrong: the operator
 * named it. A preset one the node does not have (a fork, a test chain given a known id, a pool
 * not deployed yet at the node's height) is left out and reported: the presets cannot know every
 * node they meet.
 */
export async function resolvePricing(client: ChainClient, chain: ChainConfig): Promise<ResolvedPricing> {
  const problems: string[] = [];
  const leftOut: LeftOut[] = [];
  const decimalsOf = new Map<Address, Promise<number | undefined>>();
  const decimals = (token: Address) => {
    let known = decimalsOf.get(token);
    if (!known) {
      known = client.call(token, DECIMALS).then(decodeUint8Result);
      decimalsOf.set(token, known);
    }
    return known;
  };
  const hasCode = async (address: Address) => (await client.getCode(address)).length > 2;

  const nativePegged: Address[] = [];
  if (chain.nativePegged === undefined) {
    for (const address of defaultNativePegged(chain.chainId)) {
      const reason = !(await hasCode(address))
        ? "no code at this address"
        : (await decimals(address)) === undefined
          ? "no decimals()"
          : undefined;
      if (reason) leftOut.push({ kind: "pegged_token", address, reason });
      else nativePegged.push(address);
    }
  }
  for (const address of chain.nativePegged ?? []) {
    if ((await decimals(address)) === undefined) {
      problems.push(`${chain.name} native-pegged tokens: ${address} is not an ERC-20 token (no decimals())`);
      continue;
    }
    nativePegged.push(address);
  }

  const pools: PoolDescription[] = [];
  if (chain.ratePools === undefined) {
    for (const preset of defaultPools(chain.chainId)) {
      const reason = await presetPoolProblem(client, preset, hasCode, decimals);
      if (reason) leftOut.push({ kind: "pool", address: preset.address, reason });
      else pools.push(preset);
    }
  }
  for (const { kind, address } of chain.ratePools ?? []) {
    const [token0, token1] = await Promise.all([
      client.call(address, TOKEN0).then(readAddress),
      client.call(address, TOKEN1).then(readAddress),
    ]);
    if (token0 === undefined || token1 === undefined) {
      problems.push(
        `${chain.name} rate pools: ${address} is not a Uniswap ${kind} pool (token0() and token1() do not answer with addresses)`,
      );
      continue;
    }
    const [decimals0, decimals1] = await Promise.all([decimals(token0), decimals(token1)]);
    if (decimals0 === undefined || decimals1 === undefined) {
      const token = decimals0 === undefined ? token0 : token1;
      problems.push(`${chain.name} rate pools: token ${token} of pool ${address} has no decimals()`);
      continue;
    }
    pools.push({ address, kind, token0, token1, decimals0, decimals1 });
  }

  const usdTokens: UsdToken[] = [];
  if (chain.usdTokens === undefined) {
    for (const preset of defaultUsdTokens(chain.chainId)) {
      const reason = !(await hasCode(preset.address))
        ? "no code at this address"
        : (await decimals(preset.address)) !== preset.decimals
          ? `decimals() does not answer ${preset.decimals}`
          : undefined;
      if (reason) leftOut.push({ kind: "usd_token", address: preset.address, reason });
      else usdTokens.push(preset);
    }
  }
  for (const address of chain.usdTokens ?? []) {
    const [tokenDecimals, symbol] = await Promise.all([
      decimals(address),
      client.call(address, SYMBOL).then(decodeStringResult),
    ]);
    if (tokenDecimals === undefined) {
      problems.push(`${chain.name} usd tokens: ${address} is not an ERC-20 token (no decimals())`);
      continue;
    }
    usdTokens.push({ address, symbol: symbol ?? "", decimals: tokenDecimals });
  }

  if (problems.length > 0) {
    throw new UserFacingError(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
  return { nativePegged, pools, usdTokens, leftOut };
}

/** Why a preset pool cannot be followed on this node, or undefined when it can. */
async function presetPoolProblem(
  client: ChainClient,
  pool: PoolDescription,
  hasCode: (address: Address) => Promise<boolean>,
  decimals: (token: Address) => Promise<number | undefined>,
): Promise<string | undefined> {
  if (!(await hasCode(pool.address))) return "no code at this address";
  const [token0, token1] = await Promise.all([
    client.call(pool.address, TOKEN0).then(readAddress),
    client.call(pool.address, TOKEN1).then(readAddress),
  ]);
  if (token0 === undefined || token1 === undefined)
    return "token0() and token1() do not answer with addresses";
  if (token0 !== pool.token0.toLowerCase() || token1 !== pool.token1.toLowerCase()) {
    return `its tokens are ${token0} and ${token1}, not ${pool.token0} and ${pool.token1}`;
  }
  const [decimals0, decimals1] = await Promise.all([decimals(token0), decimals(token1)]);
  if (decimals0 !== pool.decimals0 || decimals1 !== pool.decimals1) {
    return `its tokens' decimals() do not answer ${pool.decimals0} and ${pool.decimals1}`;
  }
  return undefined;
}

/** One word holding an address (its 12 high bytes zero), or undefined. */
function readAddress(data: Hex | undefined): Address | undefined {
  if (data === undefined || data.length !== 66 || !/^0x0{24}/.test(data)) return undefined;
  const address = wordToAddress(data);
  return BigInt(address) === 0n ? undefined : address;
}
