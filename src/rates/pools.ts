import type { Address } from "../core/hex.ts";

/**
 * The liquidity pools rates are read from. Uniswap orders a pool's tokens by address (token0 <
 * token1) and every price it reports is of token0 in token1, so the order here must be the
 * pool's own; a test derives each address from its factory and tokens to hold it to that.
 */
export type PoolKind = "v2" | "v3";

export interface PoolDescription {
  address: Address;
  /** v2: reserves from `Sync`; v3: `sqrtPriceX96` from `Initialize` and `Swap`. */
  kind: PoolKind;
  token0: Address;
  token1: Address;
  decimals0: number;
  decimals1: number;
}

/** A token counted as one US dollar per whole unit. */
export interface UsdToken {
  address: Address;
  symbol: string;
  decimals: number;
}

interface Token {
  address: Address;
  decimals: number;
}

function pool(kind: PoolKind, address: Address, token0: Token, token1: Token): PoolDescription {
  return {
    address,
    kind,
    token0: token0.address,
    token1: token1.address,
    decimals0: token0.decimals,
    decimals1: token1.decimals,
  };
}

const ETHEREUM = {
  WETH: { address: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", decimals: 18 },
  USDC: { address: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", decimals: 6 },
  USDT: { address: "0xdac17f958d2ee523a2206206994597c13d831ec7", decimals: 6 },
  DAI: { address: "0x6b175474e89094c44da98b954eedeac495271d0f", decimals: 18 },
  APE: { address: "0x4d224452801aced8b2f0aebe155379bb5d594381", decimals: 18 },
  WBTC: { address: "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599", decimals: 8 },
} as const satisfies Record<string, Token>;

const POLYGON = {
  WPOL: { address: "0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270", decimals: 18 },
  // Bridged USDC (USDC.e), the older and long the deeper one, and Circle's native USDC.
  USDCe: { address: "0x2791bca1f2de4661ed88a30c99a7a9449aa84174", decimals: 6 },
  USDC: { address: "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359", decimals: 6 },
  USDT: { address: "0xc2132d05d31c914a87c6611c10748aeb04b58e8f", decimals: 6 },
  WETH: { address: "0x7ceb23fd6bc0add59e62ac25578270cff1b9f619", decimals: 18 },
} as const satisfies Record<string, Token>;

const OPTIMISM = {
  WETH: { address: "0x4200000000000000000000000000000000000006", decimals: 18 },
  USDCe: { address: "0x7f5c764cbc14f9669b88837ca1490cca17c31607", decimals: 6 },
  USDC: { address: "0x0b2c639c533813f4aa9d7837caf62653d097ff85", decimals: 6 },
  USDT: { address: "0x94b008aa00579c1307b0ef2c499ad98a8ce58e58", decimals: 6 },
  OP: { address: "0x4200000000000000000000000000000000000042", decimals: 18 },
} as const satisfies Record<string, Token>;

/**
 * The pools each chain's rates come from, by chain id: the deepest pools of the wrapped coin
 * against the dollar stablecoins (several, so that the median can outvote one that is off), and
 * of the other tokens NFTs are paid with against the wrapped coin.
 */
export const DEFAULT_POOLS: Readonly<Record<number, readonly PoolDescription[]>> = {
  1: [
    // USDC/WETH, Uniswap V3 0.05% and 0.3%.
    pool("v3", "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640", ETHEREUM.USDC, ETHEREUM.WETH),
    pool("v3", "0x8ad599c3a0ff1de082011efddc58f1908eb6e6d8", ETHEREUM.USDC, ETHEREUM.WETH),
    // WETH/USDT, Uniswap V3 0.05% and 0.3%.
    pool("v3", "0x11b815efb8f581194ae79006d24e0d814b7697f6", ETHEREUM.WETH, ETHEREUM.USDT),
    pool("v3", "0x4e68ccd3e89f51c3074ca5072bbac773960dfa36", ETHEREUM.WETH, ETHEREUM.USDT),
    // DAI/WETH, Uniswap V3 0.05% and 0.3%.
    pool("v3", "0x60594a405d53811d3bc4766596efd80fd545a270", ETHEREUM.DAI, ETHEREUM.WETH),
    pool("v3", "0xc2e9f25be6257c210d7adf0d4cd6e3e881ba25f8", ETHEREUM.DAI, ETHEREUM.WETH),
    // Uniswap V2 pairs (0.3%): USDC/WETH, WETH/USDT, DAI/WETH. The deepest before V3 (May 2021).
    pool("v2", "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc", ETHEREUM.USDC, ETHEREUM.WETH),
    pool("v2", "0x0d4a11d5eeaac28ec3f61d100daf4d40471f1852", ETHEREUM.WETH, ETHEREUM.USDT),
    pool("v2", "0xa478c2975ab1ea89e8196811f51a7b7ade33eb11", ETHEREUM.DAI, ETHEREUM.WETH),
    // APE/WETH, Uniswap V3 0.3% and V2: ApeCoin pays for Otherside and Bored Ape trades. APE/USDC,
    // Uniswap V3 0.3%: a third route, through the dollar.
    pool("v3", "0xac4b3dacb91461209ae9d41ec517c2b9cb1b7daf", ETHEREUM.APE, ETHEREUM.WETH),
    pool("v2", "0xb011eeaab8bf0c6de75510128da95498e4b7e67f", ETHEREUM.APE, ETHEREUM.WETH),
    pool("v3", "0xb07fe2f407f971125d4eb1977f8acee8846c7324", ETHEREUM.APE, ETHEREUM.USDC),
    // WBTC/WETH, Uniswap V3 0.05% and 0.3%; WBTC/USDC, Uniswap V3 0.3%.
    pool("v3", "0x4585fe77225b41b697c938b018e2ac67ac5a20c0", ETHEREUM.WBTC, ETHEREUM.WETH),
    pool("v3", "0xcbcdf9626bc03e24f779434178a73a0b4bad62ed", ETHEREUM.WBTC, ETHEREUM.WETH),
    pool("v3", "0x99ac8ca7087fa4a2a1fb6357269965a2014abc35", ETHEREUM.WBTC, ETHEREUM.USDC),
  ],
  137: [
    // WPOL/USDC.e, WPOL/USDC and WPOL/USDT, Uniswap V3 0.05%.
    pool("v3", "0xa374094527e1673a86de625aa59517c5de346d32", POLYGON.WPOL, POLYGON.USDCe),
    pool("v3", "0xb6e57ed85c4c9dbfef2a68711e9d6f36c56e0fcb", POLYGON.WPOL, POLYGON.USDC),
    pool("v3", "0x9b08288c3be4f62bbf8d1c20ac9c5e6f9467d8b7", POLYGON.WPOL, POLYGON.USDT),
    // WPOL/WETH, Uniswap V3 0.05% and 0.3%: WETH is an ERC-20 on Polygon, and the usual NFT payment.
    pool("v3", "0x86f1d8390222a3691c28938ec7404a1661e618e0", POLYGON.WPOL, POLYGON.WETH),
    pool("v3", "0x167384319b41f7094e62f7506409eb38079abff8", POLYGON.WPOL, POLYGON.WETH),
    // USDC.e/WETH, USDC/WETH and WETH/USDT, Uniswap V3 0.05%: more ways to WETH, through the dollar.
    pool("v3", "0x45dda9cb7c25131df268515131f647d726f50608", POLYGON.USDCe, POLYGON.WETH),
    pool("v3", "0xa4d8c89f0c20efbe54cba9e7e7a7e509056228d9", POLYGON.USDC, POLYGON.WETH),
    pool("v3", "0xbb98b3d2b18aef63a3178023a920971cf5f29be4", POLYGON.WETH, POLYGON.USDT),
    // USDC.e/USDC, USDC.e/USDT and USDC/USDT, Uniswap V3 0.01%: each dollar's other routes.
    pool("v3", "0xd36ec33c8bed5a9f7b6630855f1533455b98a418", POLYGON.USDCe, POLYGON.USDC),
    pool("v3", "0xdac8a8e6dbf8c690ec6815e0ff03491b2770255d", POLYGON.USDCe, POLYGON.USDT),
    pool("v3", "0x31083a78e11b18e450fd139f9abea98cd53181b7", POLYGON.USDC, POLYGON.USDT),
  ],
  10: [
    // WETH/USDC.e, Uniswap V3 0.05%; USDC/WETH (native USDC), Uniswap V3 0.05%.
    pool("v3", "0x85149247691df622eaf1a8bd0cafd40bc45154a9", OPTIMISM.WETH, OPTIMISM.USDCe),
    pool("v3", "0x1fb3cf6e48f1e7b10213e7b6d87d4c073c7fdb7b", OPTIMISM.USDC, OPTIMISM.WETH),
    // WETH/USDT, Uniswap V3 0.05%.
    pool("v3", "0xc858a329bf053be78d6239c4a4343b8fbd21472b", OPTIMISM.WETH, OPTIMISM.USDT),
    // WETH/USDC.e and WETH/USDT, Uniswap V3 0.3%.
    pool("v3", "0xb589969d38ce76d3d7aa319de7133bc9755fd840", OPTIMISM.WETH, OPTIMISM.USDCe),
    pool("v3", "0xdd0c6bae8ad5998c358b823df15a2a4181da1b80", OPTIMISM.WETH, OPTIMISM.USDT),
    // USDC/USDC.e, USDC.e/USDT and USDC/USDT, Uniswap V3 0.01%: each dollar's other routes.
    pool("v3", "0x2ab22ac86b25bd448a4d9dc041bd2384655299c4", OPTIMISM.USDC, OPTIMISM.USDCe),
    pool("v3", "0xf1f199342687a7d78bcc16fce79fa2665ef870e1", OPTIMISM.USDCe, OPTIMISM.USDT),
    pool("v3", "0xa73c628eaf6e283e26a7b1f8001cf186aa4c0e8e", OPTIMISM.USDC, OPTIMISM.USDT),
    // WETH/OP, Uniswap V3 0.3% and 0.05%; OP/USDC.e, Uniswap V3 0.3%.
    pool("v3", "0x68f5c0a2de713a54991e01858fd27a3832401849", OPTIMISM.WETH, OPTIMISM.OP),
    pool("v3", "0xfc1f3296458f9b2a27a0b91dd7681c4020e09d05", OPTIMISM.WETH, OPTIMISM.OP),
    pool("v3", "0x1c3140ab59d6caf9fa7459c6f83d4b52ba881d36", OPTIMISM.OP, OPTIMISM.USDCe),
  ],
};

/**
 * Tokens worth exactly one native coin, by chain id: the wrapped coin first, and pools pegged to
 * it. Chosen by id like the pools and dollar tokens, so a chain is priced the same whatever name
 * it is given.
 */
export const NATIVE_PEGGED: Readonly<Record<number, readonly Address[]>> = {
  // WETH, and Blur's pool (ETH deposited 1:1, paid out by its marketplace).
  1: [ETHEREUM.WETH.address, "0x0000000000a39bb272e79075ade125fd351887ac"],
  // WPOL (formerly WMATIC).
  137: [POLYGON.WPOL.address],
  // WETH, the predeploy.
  10: [OPTIMISM.WETH.address],
};

/**
 * The least depth (see `depth.ts`) a pool state must have to count, in whole native coins, by
 * chain id: about 25,000 US dollars on each of the preset chains, far above what a trader moves
 * in passing and far below the preset pools' depth.
 */
export const MIN_DEPTH_COINS: Readonly<Record<number, number>> = { 1: 10, 137: 100_000, 10: 10 };

/** The floor of a chain without a preset: ten coins. */
export const DEFAULT_MIN_DEPTH_COINS = 10;

/** The dollar stablecoins of each chain, by chain id: what a USD rate is read against. */
export const USD_TOKENS: Readonly<Record<number, readonly UsdToken[]>> = {
  1: [
    { ...ETHEREUM.USDC, symbol: "USDC" },
    { ...ETHEREUM.USDT, symbol: "USDT" },
    { ...ETHEREUM.DAI, symbol: "DAI" },
  ],
  137: [
    { ...POLYGON.USDCe, symbol: "USDC.e" },
    { ...POLYGON.USDC, symbol: "USDC" },
    { ...POLYGON.USDT, symbol: "USDT" },
  ],
  10: [
    { ...OPTIMISM.USDCe, symbol: "USDC.e" },
    { ...OPTIMISM.USDC, symbol: "USDC" },
    { ...OPTIMISM.USDT, symbol: "USDT" },
  ],
};

/** A chain's default pools; none for a chain without presets, whose sales then carry no rates. */
export function defaultPools(chainId: number): readonly PoolDescription[] {
  return DEFAULT_POOLS[chainId] ?? [];
}

export function defaultUsdTokens(chainId: number): readonly UsdToken[] {
  return USD_TOKENS[chainId] ?? [];
}

export function defaultNativePegged(chainId: number): readonly Address[] {
  return NATIVE_PEGGED[chainId] ?? [];
}

/** A chain's default floor in wei (the native coin has 18 decimals on every chain Mintlens knows). */
export function defaultMinDepth(chainId: number): bigint {
  return BigInt(MIN_DEPTH_COINS[chainId] ?? DEFAULT_MIN_DEPTH_COINS) * 10n ** 18n;
}
