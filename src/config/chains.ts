/** What Mintlens knows of a chain without being told. */
export interface ChainPreset {
  name: string;
  chainId: number;
  nativeSymbol: string;
  /** Blocks behind the head before a block is indexed: deep enough that reorgs past it are not expected. */
  confirmations: number;
}

export const CHAIN_PRESETS: Readonly<Record<string, ChainPreset>> = {
  ethereum: { name: "ethereum", chainId: 1, nativeSymbol: "ETH", confirmations: 12 },
  polygon: { name: "polygon", chainId: 137, nativeSymbol: "POL", confirmations: 64 },
  optimism: { name: "optimism", chainId: 10, nativeSymbol: "ETH", confirmations: 20 },
};
