/** What Mintlens knows of a chain without being told. */
export interface ChainPreset {
  name: string;
  chainId: number;
  nativeSymbol: string;
  /** Blocks behind the head before a block is indexed: deep enough that reorgs past it are not expected. */
  confirmations: number;
  /** ERC-20 tokens worth exactly one native coin: the wrapped coin, and pools pegged to it. */
  nativePegged: readonly `0x${string}`[];
}

export const CHAIN_PRESETS: Readonly<Record<string, ChainPreset>> = {
  ethereum: {
    name: "ethereum",
    chainId: 1,
    nativeSymbol: "ETH",
    confirmations: 12,
    // WETH, and Blur's pool (ETH deposited 1:1, paid out by its marketplace).
    nativePegged: [
      "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
      "0x0000000000a39bb272e79075ade125fd351887ac",
    ],
  },
  polygon: {
    name: "polygon",
    chainId: 137,
    nativeSymbol: "POL",
    confirmations: 64,
    // WPOL (formerly WMATIC).
    nativePegged: ["0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270"],
  },
  optimism: {
    name: "optimism",
    chainId: 10,
    nativeSymbol: "ETH",
    confirmations: 20,
    // WETH, the predeploy.
    nativePegged: ["0x4200000000000000000000000000000000000006"],
  },
};
