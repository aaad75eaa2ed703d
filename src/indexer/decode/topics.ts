import type { Hex } from "../../core/hex.ts";

/**
 * Topic0 (event selector) of every event the indexer reads. Hashes are spelled out rather than
 * computed so that decoding needs no hashing library; a test recomputes each one.
 */

/** `Transfer(address,address,uint256)`: ERC-20 and ERC-721 alike; how many topics are indexed tells them apart. */
export const TRANSFER_TOPIC: Hex = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/** ERC-1155 `TransferSingle(address,address,address,uint256,uint256)`. */
export const TRANSFER_SINGLE_TOPIC: Hex =
  "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62";

/** ERC-1155 `TransferBatch(address,address,address,uint256[],uint256[])`. */
export const TRANSFER_BATCH_TOPIC: Hex = "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb";

/** ERC-2309 `ConsecutiveTransfer(uint256,uint256,address,address)`. */
export const CONSECUTIVE_TRANSFER_TOPIC: Hex =
  "0xdeaa91b6123d068f5821d0fb0678463d1a8a6079fe8af5de3ce5e896dcf9133d";

/** CryptoPunks `Assign(address,uint256)`: a punk handed out by the contract, i.e. its mint. */
export const PUNK_ASSIGN_TOPIC: Hex = "0x8a0e37b73a0d9c82e205d4d1a3ff3d0b57ce5f4d7bccf6bac03336dc101cb7ba";

/** CryptoPunks `PunkTransfer(address,address,uint256)`. */
export const PUNK_TRANSFER_TOPIC: Hex = "0x05af636b70da6819000c49f85b21fa82081c632069bb626f30932034099107d8";

/** CryptoPunks `PunkBought(uint256,uint256,address,address)`. */
export const PUNK_BOUGHT_TOPIC: Hex = "0x58e5d5a525e3b40bc15abaa38b5882678db1ee68befd2f60bafe3a7fd06db9e3";

/**
 * What eth_getLogs must be asked for. The ERC-20 `Transfer` shares its topic0 with ERC-721's, so
 * fungible transfers come along; they are needed anyway as the payments of NFT sales.
 */
export const TRANSFER_TOPICS: readonly Hex[] = [
  TRANSFER_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_BATCH_TOPIC,
  CONSECUTIVE_TRANSFER_TOPIC,
  PUNK_ASSIGN_TOPIC,
  PUNK_TRANSFER_TOPIC,
  PUNK_BOUGHT_TOPIC,
];
