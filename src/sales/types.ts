import type { Address, Hex } from "../core/hex.ts";
import type { FungibleTransfer, NativeTransfer, NftTransfer } from "../core/types.ts";

export type { NativeTransfer };

/** One NFT an order sold, at the full price its order states (before fees, in the order's currency). */
export interface Listing {
  contract: Address;
  tokenId: bigint;
  price: bigint;
}

/**
 * A marketplace's own record of a trade, used to label the sale, to split a payment for several
 * NFTs by their listed prices, and, for CryptoPunks, to price it.
 */
export interface MarketEvent {
  /** The marketplace, as named in the label table (`seaport`, `blur`, `cryptopunks`, …). */
  market: string;
  /** The contract that logged the event. */
  contract: Address;
  logIndex: number;
  /** For CryptoPunks' `PunkBought`: the punk, the value it states, and its parties. */
  punk?: { index: bigint; value: bigint; from: Address; to: Address };
  /** The NFT the order sold and its price, where the event states both for a single NFT. */
  listing?: Listing;
}

/** An open CryptoPunks bid, known from its `PunkBidEntered`: what an accepted bid is paid. */
export interface PunkBid {
  contract: Address;
  punkIndex: bigint;
  bidder: Address;
  value: bigint;
}

/** Everything attribution reads about one transaction that moved at least one NFT. */
export interface SaleTransaction {
  txHash: Hex;
  txIndex: number;
  blockNumber: number;
  /** The transaction's sender and recipient (null for a deployment), and the value it sent. */
  from: Address;
  to: Address | null;
  value: bigint;
  /** NFT movements, in (log index, seq) order. */
  nft: readonly NftTransfer[];
  /** ERC-20 movements, in log order. */
  fungible: readonly FungibleTransfer[];
  /**
   * Native movements from call traces, in execution order; undefined when the node has no trace
   * API, and the transaction's own value is all that is known to have moved.
   */
  native: readonly NativeTransfer[] | undefined;
  markets: readonly MarketEvent[];
}

/** How the payment of a transaction was split across the NFTs it bought. */
export type AttributedBy =
  /** One NFT (one token, any number of its units) for the payment. */
  | "ATTRIBUTED_BY_SINGLE_TRANSFER"
  /** Several NFTs of one collection from one seller: the payment split by units. */
  | "ATTRIBUTED_BY_SAME_CONTRACT_AVERAGE"
  /** Several NFTs of several collections from one seller (a bundle): the payment split by units. */
  | "ATTRIBUTED_BY_MULTI_CONTRACT_AVERAGE"
  /** NFTs from several sellers (a sweep): the payment split in proportion to what each seller received. */
  | "ATTRIBUTED_BY_SELLER_PROCEEDS"
  /** Nothing was paid for it (an NFT that came back to its holder). */
  | "ATTRIBUTED_BY_NO_PAYMENTS"
  /** The recipient paid nothing; the transaction's sender paid for it. */
  | "ATTRIBUTED_BY_RECIPIENT_NO_PAYMENT"
  /** A CryptoPunks trade priced from the market's own record (its `PunkBought` value or the accepted bid). */
  | "ATTRIBUTED_BY_MARKET_EVENT";

/** What became of an NFT that changed hands for a payment, or came back. */
export type TradeKind =
  /** A seller's NFT went to a buyer who paid the seller side. */
  | "sale"
  /** A new NFT went to an account that paid for it: recorded with its price, never counted as a sale. */
  | "mint"
  /** The NFT left its holder and came back within the transaction: recorded, never a sale. */
  | "return";

/** A payment in one ERC-20 token: its contract and the amount in the token's base units. */
export interface TokenAmount {
  token: Address;
  amount: bigint;
}

/** One NFT trade of a transaction, with its share of the payment, before conversion to native and USD. */
export interface Trade {
  kind: TradeKind;
  contract: Address;
  tokenId: bigint;
  seller: Address;
  buyer: Address;
  /** Units that changed hands (1 for ERC-721). */
  quantity: bigint;
  /** The transfer that delivered the NFT to the buyer: the sale's event. */
  blockNumber: number;
  logIndex: number;
  seq: number;
  txHash: Hex;
  txIndex: number;
  /** Native coin paid for this trade, in wei. */
  native: bigint;
  /** ERC-20 paid for this trade, per token, in base units, by token address. */
  fungible: readonly TokenAmount[];
  attributedBy: AttributedBy;
  /** The marketplace whose event the transaction logged, or '' when none is known. */
  market: string;
  /** The native part is the transaction's value alone: the node had no call traces. */
  priceFromTransactionValue: boolean;
}
