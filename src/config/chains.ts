/** What Mintlens knows of a chain without being told. */
export interface ChainPreset {
  name: string;
  chainId: number;
  nativeSymbol: string;
  /** Blocks behind the head before a block is indexed: deep enough that reorgs past it are not expected. */
  confirmations: number;
}

/*
 * What prices a chain (its native-pegged tokens, rate pools and dollar tokens) is chosen by chain
 * id, in `rates/pools.ts`, not here by name: a chain named otherwise is priced the same.
 */

export const CHAIN_PRESETS: Readonly<Record<string, ChainPreset>> = {
  ethereum: {
    name: "ethereum",
    chainId: 1,
    nativeSymbol: "ETH",
    confirmations: 12,
  },
  polygon: {
    name: "polygon",
    chainId: 137,
    nativeSymbol: "POL",
    confirmations: 64,
  },
  optimism: {
    name: "optimism",
    chainId: 10,
    nativeSymbol: "ETH",
    confirmations: 20,
  },
};
